-- Analytics rollup (issue 13): the company and visitor statistics, totals and charts read this
-- table, not raw page views (DESIGN.md, "The read path").
--
-- One row per organization, hour, company, visitor and session that had hits in that hour. Hours
-- (UTC) rather than days, so a chart or a date-only bound in any whole-hour time zone falls on row
-- boundaries; the company and the session are part of the key, so every figure is exact: distinct
-- visitors, sessions and companies, page views, engaged time, first and last hit, per company or
-- over everything. On the benchmark's data a row stands for three page views on average (a session
-- rarely spans an hour), and the range filter reads only the hours asked for.
CREATE TABLE IF NOT EXISTS {{local:traffic_hours}} {{on_cluster}} (
  organization_id UUID,
  hour DateTime('UTC'),
  company_id String,
  visitor_id UUID,
  session_id UUID,
  hit_count SimpleAggregateFunction(sum, UInt64),
  page_view_count SimpleAggregateFunction(sum, UInt64),
  engaged_ms_sum SimpleAggregateFunction(sum, UInt64),
  first_hit_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_hit_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = {{sharded:AggregatingMergeTree}}
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, hour, company_id, visitor_id, session_id)
SETTINGS merge_selector_base = 10;

-- Sharded like page_views (by session), so each shard rolls up its own page views.
{{distributed:traffic_hours:cityHash64(session_id)}};

-- The page views already stored, then every block inserted from now on. Migrations run before the
-- process ingests, so nothing is counted twice.
INSERT INTO traffic_hours (organization_id, hour, company_id, visitor_id, session_id, hit_count,
  page_view_count, engaged_ms_sum, first_hit_at, last_hit_at)
SELECT
  organization_id,
  toStartOfHour(timestamp) AS hour,
  company_id,
  visitor_id,
  session_id,
  count() AS hit_count,
  countIf(type = 'pageview') AS page_view_count,
  sum(engaged_ms) AS engaged_ms_sum,
  min(timestamp) AS first_hit_at,
  max(timestamp) AS last_hit_at
FROM page_views
GROUP BY organization_id, hour, company_id, visitor_id, session_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS traffic_hours_mv {{on_cluster}} TO {{local:traffic_hours}} AS
SELECT
  organization_id,
  toStartOfHour(timestamp) AS hour,
  company_id,
  visitor_id,
  session_id,
  count() AS hit_count,
  countIf(type = 'pageview') AS page_view_count,
  sum(engaged_ms) AS engaged_ms_sum,
  min(timestamp) AS first_hit_at,
  max(timestamp) AS last_hit_at
FROM {{local:page_views}}
GROUP BY organization_id, hour, company_id, visitor_id, session_id;
