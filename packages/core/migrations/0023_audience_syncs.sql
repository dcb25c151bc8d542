-- Audience syncs on the AdsPlatform port (docs/decisions.md, "Integrations").

-- What this server has put in each ads-platform audience: one row per member hash, written after
-- the platform acknowledged the batch that carried it, and written again as deleted once a batch
-- removing it is acknowledged. A sync adds the list's hashes the audience lacks and removes the
-- audience's hashes the list lost: both are set differences the engine computes against the list's
-- snapshot, read a page at a time in hash order (this table's key). `audience_key` is
-- `type:accountId:audienceId`.
CREATE TABLE IF NOT EXISTS audience_members {{on_cluster}} (
  organization_id UUID,
  audience_key String,
  email_sha256 String,
  synced_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (organization_id, audience_key, email_sha256);

-- The last sync of each list to each audience, as the list and the run log show it: `outcome` is
-- JSON (status, members sent and removed, what the platform counted and matched, its request ids
-- and their processing, the platform's words on a failure).
CREATE TABLE IF NOT EXISTS audience_syncs {{on_cluster}} (
  organization_id UUID,
  list_id String,
  audience_key String,
  flow_id String,
  outcome String,
  updated_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = {{global:ReplacingMergeTree(version)}}
ORDER BY (organization_id, list_id, audience_key);
