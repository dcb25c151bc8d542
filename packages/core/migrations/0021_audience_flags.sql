-- The ICP audience in first_hours (issue 13; bench/analytics/RESULTS.md, "The audience in the
-- rows"). An ICPOnly or personaOnly figure used to filter every first_hours row of the range by
-- `visitor_id IN` the audience's set (15-40 ms a statement at 10 M page views, however small the
-- set). Now the settling pass flags each row with its visitor's audience as it writes it, and keeps
-- the flags right as the audience changes:
--
-- * `icp`: the visitor is matched by an active config of its organization (any kind); `persona`:
--   its persona is matched by an active organization-level config (what ICPOnly and personaOnly
--   mean, analytics/audience.ts). A single config (icpSlug) is still a set.
-- * `audience_changes`: the visitors whose scores changed (a view of icp_scores, which is written
--   only where a result changes) or whose configs were turned on, off or deleted (written by the
--   config service). The pass reads it beside `visitor_changes`, so a new match is counted by the
--   next pass, as a new page view is.
-- * first_hours sorts each kind's ICP rows apart (`icp` before `hour` in its key): an ICPOnly list
--   or total reads the audience's rows only.
-- * `first_hour_counts` sums the ICP rows apart too (`icp_*`): ICPOnly totals and charts, and
--   everyone's ICP visitors, are sums of a few rows an hour like everyone's figures.
--
-- The rows are settled again from `visitor_hours`: the tables are made anew and the pass watermark
-- cleared, so the first pass after this migration settles every visitor (36-41 s at 10 M page
-- views; the figures are partial until it ends).
DROP VIEW IF EXISTS first_hour_counts_mv {{on_cluster}};
DROP VIEW IF EXISTS first_hours_by_visitor_mv {{on_cluster}};
DROP TABLE IF EXISTS first_hour_counts {{on_cluster}} SYNC;
DROP TABLE IF EXISTS {{local:first_hour_counts}} {{on_cluster}} SYNC;
DROP TABLE IF EXISTS first_hours_by_visitor {{on_cluster}} SYNC;
DROP TABLE IF EXISTS {{local:first_hours_by_visitor}} {{on_cluster}} SYNC;
DROP TABLE IF EXISTS first_hours {{on_cluster}} SYNC;
DROP TABLE IF EXISTS {{local:first_hours}} {{on_cluster}} SYNC;
TRUNCATE TABLE IF EXISTS first_hours_passes {{on_cluster}};

CREATE TABLE IF NOT EXISTS {{local:audience_changes}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  changed_at DateTime64(3, 'UTC')
) ENGINE = {{sharded:MergeTree}}
ORDER BY changed_at
TTL toDateTime(changed_at) + INTERVAL 1 DAY;

{{distributed:audience_changes:cityHash64(visitor_id)}};

CREATE MATERIALIZED VIEW IF NOT EXISTS audience_changes_scores_mv {{on_cluster}} TO {{local:audience_changes}} AS
SELECT organization_id, visitor_id, now64(3) AS changed_at
FROM {{local:icp_scores}}
GROUP BY organization_id, visitor_id;

-- As in migration 0020, with the audience flags.
CREATE TABLE IF NOT EXISTS {{local:first_hours}} {{on_cluster}} (
  organization_id UUID,
  kind Enum8('visitor' = 1, 'session' = 2, 'company_visitor' = 3, 'company_session' = 4),
  icp UInt8,
  hour DateTime('UTC'),
  company_id String,
  visitor_id UUID,
  session_id UUID,
  previous_hour DateTime('UTC'),
  first_hit_at DateTime64(3, 'UTC'),
  last_hit_at DateTime64(3, 'UTC'),
  previous_last_hit_at DateTime64(3, 'UTC'),
  page_view_count UInt64,
  engaged_ms UInt64,
  identified UInt8,
  persona UInt8,
  sign Int8
) ENGINE = {{sharded:CollapsingMergeTree(sign)}}
PARTITION BY toYYYYMM(hour)
PRIMARY KEY (organization_id, kind, icp, hour)
ORDER BY (organization_id, kind, icp, hour, company_id, visitor_id, session_id, previous_hour,
  first_hit_at, last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified, persona);

{{distributed:first_hours:cityHash64(visitor_id)}};

CREATE TABLE IF NOT EXISTS {{local:first_hours_by_visitor}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  kind Enum8('visitor' = 1, 'session' = 2, 'company_visitor' = 3, 'company_session' = 4),
  icp UInt8,
  hour DateTime('UTC'),
  company_id String,
  session_id UUID,
  previous_hour DateTime('UTC'),
  first_hit_at DateTime64(3, 'UTC'),
  last_hit_at DateTime64(3, 'UTC'),
  previous_last_hit_at DateTime64(3, 'UTC'),
  page_view_count UInt64,
  engaged_ms UInt64,
  identified UInt8,
  persona UInt8,
  sign Int8
) ENGINE = {{sharded:CollapsingMergeTree(sign)}}
PRIMARY KEY (organization_id, visitor_id)
ORDER BY (organization_id, visitor_id, kind, icp, hour, company_id, session_id, previous_hour,
  first_hit_at, last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified, persona)
SETTINGS index_granularity = 1024;

{{distributed:first_hours_by_visitor:cityHash64(visitor_id)}};

CREATE MATERIALIZED VIEW IF NOT EXISTS first_hours_by_visitor_mv {{on_cluster}} TO {{local:first_hours_by_visitor}} AS
SELECT organization_id, visitor_id, kind, icp, hour, company_id, session_id, previous_hour, first_hit_at,
  last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified, persona, sign
FROM {{local:first_hours}};

CREATE TABLE IF NOT EXISTS {{local:first_hour_counts}} {{on_cluster}} (
  organization_id UUID,
  kind Enum8('visitor' = 1, 'session' = 2, 'company_visitor' = 3, 'company_session' = 4),
  hour DateTime('UTC'),
  previous_hour DateTime('UTC'),
  rows Int64,
  identified Int64,
  page_view_count Int64,
  engaged_ms Int64,
  first_span_ms Int64,
  later_span_ms Int64,
  icp_rows Int64,
  icp_identified Int64,
  icp_page_view_count Int64,
  icp_engaged_ms Int64,
  icp_first_span_ms Int64,
  icp_later_span_ms Int64
) ENGINE = {{sharded:SummingMergeTree}}
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, kind, hour, previous_hour);

{{distributed:first_hour_counts:cityHash64(organization_id)}};

-- The row's terms named apart from the sums (an alias of the outer SELECT would shadow a column).
CREATE MATERIALIZED VIEW IF NOT EXISTS first_hour_counts_mv {{on_cluster}} TO {{local:first_hour_counts}} AS
SELECT organization_id, kind, hour, previous_hour,
  sum(sign) AS rows,
  sum(sign * is_identified) AS identified,
  sum(sign * views) AS page_view_count,
  sum(sign * engaged) AS engaged_ms,
  sum(sign * first_span) AS first_span_ms,
  sum(sign * later_span) AS later_span_ms,
  sum(sign * icp) AS icp_rows,
  sum(sign * icp * is_identified) AS icp_identified,
  sum(sign * icp * views) AS icp_page_view_count,
  sum(sign * icp * engaged) AS icp_engaged_ms,
  sum(sign * icp * first_span) AS icp_first_span_ms,
  sum(sign * icp * later_span) AS icp_later_span_ms
FROM (
  SELECT organization_id, kind, hour, previous_hour, toInt64(sign) AS sign, toInt64(icp) AS icp,
    toInt64(identified) AS is_identified, toInt64(page_view_count) AS views, toInt64(engaged_ms) AS engaged,
    toInt64(toUnixTimestamp64Milli(last_hit_at)) - toInt64(toUnixTimestamp64Milli(first_hit_at)) AS first_span,
    toInt64(toUnixTimestamp64Milli(last_hit_at)) - toInt64(toUnixTimestamp64Milli(previous_last_hit_at)) AS later_span
  FROM {{local:first_hours}}
)
GROUP BY organization_id, kind, hour, previous_hour;
