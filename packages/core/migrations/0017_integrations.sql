-- Ad-platform integrations and flows (DESIGN.md, "Integrations").

-- One row per organization and integration type: its OAuth tokens, encrypted with SECRET_KEY
-- (AES-256-GCM; the columns hold `v1.<iv>.<tag>.<ciphertext>`, base64url), the ads accounts the
-- provider listed, the one selected. `status`: connected, or reauthorization_required once the
-- provider refused the refresh token. Disconnecting deletes the row (and with it the tokens).
CREATE TABLE IF NOT EXISTS integrations {{on_cluster}} (
  organization_id UUID,
  type LowCardinality(String),
  status LowCardinality(String),
  access_token String,
  refresh_token String,
  expires_at Nullable(DateTime64(3, 'UTC')),
  scope String,
  ads_accounts String,
  selected_account_id String,
  connected_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (organization_id, type);

-- Flows: a trigger and actions (`nodes`, JSON validated by the API), and what their actions keep
-- between runs (`state`: the audience made for a list on an account).
CREATE TABLE IF NOT EXISTS integration_flows {{on_cluster}} (
  organization_id UUID,
  id String,
  title String,
  integration_id String,
  trigger LowCardinality(String),
  nodes String,
  state String,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (organization_id, id);

-- The run log of flows: one row per run (its trigger's event, each action's outcome), kept 90 days.
CREATE TABLE IF NOT EXISTS integration_flow_runs {{on_cluster}} (
  organization_id UUID,
  flow_id String,
  run_id String,
  event_id String,
  trigger LowCardinality(String),
  status LowCardinality(String),
  actions String,
  started_at DateTime64(3, 'UTC'),
  finished_at DateTime64(3, 'UTC')
) ENGINE = {{global:MergeTree}}
ORDER BY (organization_id, flow_id, started_at)
TTL toDateTime(started_at) + INTERVAL 90 DAY;
