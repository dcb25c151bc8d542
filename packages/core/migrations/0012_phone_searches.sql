-- Phone searches (issue 15; DESIGN.md, "Phone search"): the latest search of each visitor, one row
-- per (organization, visitor), each state change a new version. The row is the state machine's
-- memory: `not_found` is never searched again, `error` and `expired` once more (`tries`), and a
-- found phone shows on the visitor's profile from here.
CREATE TABLE IF NOT EXISTS phone_searches {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  -- The current search: its credit reservation is `phone:<search_id>` in credit_ledger.
  search_id String,
  status LowCardinality(String),
  -- Searches started for this visitor: 1, then 2 after the one retry an error or expiry allows.
  tries UInt8,
  provider LowCardinality(String),
  -- Started by auto phone enrichment rather than a request.
  auto Bool,
  -- The phone in E.164, once found.
  phone String DEFAULT '',
  -- Why a search ended in error (never a secret of the provider).
  reason String DEFAULT '',
  -- SHA-256 of the token a callback provider must present (http provider, callback mode).
  callback_token_sha256 String DEFAULT '',
  started_at DateTime64(3, 'UTC'),
  finished_at Nullable(DateTime64(3, 'UTC')),
  version UInt64
) ENGINE = {{global:ReplacingMergeTree(version)}}
ORDER BY (organization_id, visitor_id);
