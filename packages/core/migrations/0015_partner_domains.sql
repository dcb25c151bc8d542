-- Partner custom domains (DESIGN.md, "Partner custom domain"): the hostname a partner serves the
-- pixel and the collect endpoints from, once a DNS check found its CNAME to the service. One domain
-- per partner (a new one replaces the old and starts unverified again). `status` is pending (not
-- checked yet), verified or failed (the last conclusive check did not find the record: the daily
-- re-check turns a verified domain whose record disappeared into failed). `last_answer` is what
-- DNS said at the last check, in words, for the verification read and the verify route's message.
CREATE TABLE IF NOT EXISTS partner_domains {{on_cluster}} (
  partner_id UUID,
  domain String,
  cname_target String,
  status LowCardinality(String),
  verified_at Nullable(DateTime64(3, 'UTC')),
  checked_at Nullable(DateTime64(3, 'UTC')),
  last_answer String,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY partner_id;
