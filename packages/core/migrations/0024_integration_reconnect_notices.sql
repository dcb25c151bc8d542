-- The `integration_reconnect` email (docs/decisions.md, "Integrations"): one row per grant without a
-- refresh token whose members were told to reconnect, keyed by the grant's expiry. The worker's
-- hourly pass mails each grant once, across restarts and long after its email jobs are gone (a job
-- id dedupes only while the job waits); installing again brings a new expiry, hence a new email.
-- Kept 30 days past the expiry.
CREATE TABLE IF NOT EXISTS integration_reconnect_notices {{on_cluster}} (
  organization_id UUID,
  type LowCardinality(String),
  expires_at DateTime64(3, 'UTC'),
  queued_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = {{global:ReplacingMergeTree(version)}}
ORDER BY (organization_id, type, expires_at)
TTL toDateTime(expires_at) + INTERVAL 30 DAY;
