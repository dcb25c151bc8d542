-- Filtered hits per organization: what ingest dropped (a known bot, automation, a disallowed
-- origin, a privacy signal, an identify hit without an email), counted by UTC day and reason.
-- Ingest adds the counts up in memory per (organization, day, reason) and writes them every few
-- seconds, a handful of rows per write whatever the traffic; the engine sums the rows of a key when
-- it merges, and readers sum too (a key may sit in several parts until then). A hit dropped before
-- its organization is known (an unknown tracking key, a body that is not a hit) has no row here:
-- it is counted only in /metrics (`vid_ingest_hits_dropped_total`).
CREATE TABLE IF NOT EXISTS dropped_hits {{on_cluster}} (
  organization_id UUID,
  day Date,
  reason LowCardinality(String),
  hits UInt64
) ENGINE = {{global:SummingMergeTree(hits)}}
ORDER BY (organization_id, day, reason)
-- A write that failed is tried again with its deduplication token: if the first try landed after
-- all, the retry is a no-op (Replicated tables keep a window of their own).
SETTINGS non_replicated_deduplication_window = 100;
