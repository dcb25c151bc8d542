-- Partner webhooks (issue 16; DESIGN.md, "Partner webhooks").

-- Each partner's two webhooks (`identification`, `billing`): URL, secret, enabled. The secret signs
-- every delivery, so it is kept as given (never returned: the API shows `hasSecret`).
CREATE TABLE IF NOT EXISTS webhook_configs {{on_cluster}} (
  partner_id UUID,
  kind LowCardinality(String),
  url String,
  secret String,
  enabled Bool,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (partner_id, kind);

-- One row per delivery (an event on its way to a partner), each state change a new version: the
-- outbox the dispatcher reads, so a delivery survives restarts and needs nothing but the store.
-- `body` is the exact JSON that is signed and sent, on every try. Kept 30 days (the retries of a
-- delivery end within 9 hours; a log entry older than that can no longer be redelivered), so the
-- dispatcher's scan for due deliveries stays the size of a month of events.
CREATE TABLE IF NOT EXISTS webhook_deliveries {{on_cluster}} (
  id String,
  partner_id UUID,
  organization_id UUID,
  kind LowCardinality(String),
  event_id String,
  event_type LowCardinality(String),
  body String,
  -- pending (never tried), retrying, success, failed
  status LowCardinality(String),
  attempts UInt16,
  next_attempt_at DateTime64(3, 'UTC'),
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = {{global:ReplacingMergeTree(version)}}
ORDER BY (partner_id, id)
TTL toDateTime(created_at) + INTERVAL 30 DAY;

-- The delivery log: one row per attempt (and per test delivery), newest first by partner; kept 90 days.
CREATE TABLE IF NOT EXISTS webhook_attempts {{on_cluster}} (
  id String,
  delivery_id String,
  partner_id UUID,
  organization_id Nullable(UUID),
  kind LowCardinality(String),
  event_id String,
  event_type LowCardinality(String),
  attempt UInt16,
  -- success, retrying (failed, another try is scheduled), failed (no more tries)
  status LowCardinality(String),
  status_code Nullable(UInt16),
  error String,
  attempted_at DateTime64(3, 'UTC'),
  response_time_ms UInt32
) ENGINE = {{global:MergeTree}}
ORDER BY (partner_id, attempted_at, id)
TTL toDateTime(attempted_at) + INTERVAL 90 DAY;
