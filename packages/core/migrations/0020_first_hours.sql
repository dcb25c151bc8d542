-- Exact distinct counts without a hash table (issue 13; bench/analytics/RESULTS.md, "Exact
-- distinct counts without a hash table"). A visitor counts once in a range, by its first active hour
-- in it, which is the one hour of the range whose previous active hour lies before the range. With
-- each active hour of a visitor stored next to its previous active hour, "distinct visitors from F
-- to T" is a filtered count (`hour BETWEEN F AND T AND previous_hour < F`) instead of a hash table
-- of every visitor of the range; the same for sessions and a company's visitors and sessions.
--
-- * `visitor_hours`: the sums of each organization, visitor, hour, session and company (a view of
--   page_views), ordered by visitor: a visitor's whole activity is a primary-key read.
-- * `company_hours`: the same rows with a company, ordered by company: a page of companies' figures
--   and one company's visitors read only those companies' rows.
-- * `first_hours`: one row per active hour of a visitor, a session, a (company, visitor) and a
--   (company, session) pair, with the key's previous active hour. Written only by the settling pass (core
--   analytics/first-hours.ts), under a lock: it recomputes the rows of the visitors with new page
--   views from `visitor_hours` and inserts the difference with what is stored (sign -1 takes a row
--   back, +1 adds one), so a late hit between two hours, a replayed batch or a second pass over the
--   same visitors leaves the rows exact. Readers sum `sign`; every value is in the sorting key, so
--   merges only ever collapse a row with its own cancellation.
-- * `first_hours_by_visitor`: the same rows ordered by visitor (a view of first_hours), where the
--   pass reads what is stored for the visitors it settles.
-- * `first_hour_counts`: first_hours summed by kind, hour and previous hour (a view of it), for the
--   figures of everyone.
-- * `first_hours_passes`: how far the pass got (the time of the newest `visitor_changes` it read).
--
-- Nothing is backfilled here: the first pass finds no watermark and settles every visitor.

CREATE TABLE IF NOT EXISTS {{local:visitor_hours}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  hour DateTime('UTC'),
  session_id UUID,
  company_id String,
  hit_count SimpleAggregateFunction(sum, UInt64),
  page_view_count SimpleAggregateFunction(sum, UInt64),
  engaged_ms_sum SimpleAggregateFunction(sum, UInt64),
  first_hit_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_hit_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = {{sharded:AggregatingMergeTree}}
ORDER BY (organization_id, visitor_id, hour, session_id, company_id)
-- Read a few visitors at a time (a page's figures, the pass's visitors): small granules.
SETTINGS index_granularity = 1024;

{{distributed:visitor_hours:cityHash64(visitor_id)}};

CREATE TABLE IF NOT EXISTS {{local:company_hours}} {{on_cluster}} (
  organization_id UUID,
  company_id String,
  hour DateTime('UTC'),
  visitor_id UUID,
  session_id UUID,
  hit_count SimpleAggregateFunction(sum, UInt64),
  page_view_count SimpleAggregateFunction(sum, UInt64),
  engaged_ms_sum SimpleAggregateFunction(sum, UInt64),
  first_hit_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_hit_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = {{sharded:AggregatingMergeTree}}
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, company_id, hour, visitor_id, session_id);

{{distributed:company_hours:cityHash64(session_id)}};

-- Every page view stored so far at these grains (again from scratch if this migration runs again),
-- then every block inserted from now on. Migrations run before the process ingests, so nothing is
-- counted twice.
TRUNCATE TABLE IF EXISTS {{local:visitor_hours}} {{on_cluster}};

INSERT INTO visitor_hours (organization_id, visitor_id, hour, session_id, company_id, hit_count,
  page_view_count, engaged_ms_sum, first_hit_at, last_hit_at)
SELECT organization_id, visitor_id, toStartOfHour(timestamp) AS hour, session_id, company_id, count(),
  countIf(type = 'pageview'), sum(engaged_ms), min(timestamp), max(timestamp)
FROM page_views
GROUP BY organization_id, visitor_id, hour, session_id, company_id;

TRUNCATE TABLE IF EXISTS {{local:company_hours}} {{on_cluster}};

INSERT INTO company_hours (organization_id, company_id, hour, visitor_id, session_id, hit_count,
  page_view_count, engaged_ms_sum, first_hit_at, last_hit_at)
SELECT organization_id, company_id, hour, visitor_id, session_id, sum(hit_count), sum(page_view_count),
  sum(engaged_ms_sum), min(first_hit_at), max(last_hit_at)
FROM visitor_hours
WHERE company_id != ''
GROUP BY organization_id, company_id, hour, visitor_id, session_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_hours_mv {{on_cluster}} TO {{local:visitor_hours}} AS
SELECT
  organization_id,
  visitor_id,
  toStartOfHour(timestamp) AS hour,
  session_id,
  company_id,
  count() AS hit_count,
  countIf(type = 'pageview') AS page_view_count,
  sum(engaged_ms) AS engaged_ms_sum,
  min(timestamp) AS first_hit_at,
  max(timestamp) AS last_hit_at
FROM {{local:page_views}}
GROUP BY organization_id, visitor_id, hour, session_id, company_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS company_hours_mv {{on_cluster}} TO {{local:company_hours}} AS
SELECT
  organization_id,
  company_id,
  toStartOfHour(timestamp) AS hour,
  visitor_id,
  session_id,
  count() AS hit_count,
  countIf(type = 'pageview') AS page_view_count,
  sum(engaged_ms) AS engaged_ms_sum,
  min(timestamp) AS first_hit_at,
  max(timestamp) AS last_hit_at
FROM {{local:page_views}}
WHERE company_id != ''
GROUP BY organization_id, company_id, hour, visitor_id, session_id;

-- traffic_hours (migration 0010) is read no more: visitor_hours, company_hours and first_hours
-- serve every figure it served, with one view less on page_views than the three would cost.
DROP VIEW IF EXISTS traffic_hours_mv {{on_cluster}};

DROP TABLE IF EXISTS traffic_hours {{on_cluster}} SYNC;

DROP TABLE IF EXISTS {{local:traffic_hours}} {{on_cluster}} SYNC;

-- kind 'visitor': visitor_id; first/last hit of the visitor in the hour.
-- kind 'session': session_id (and its visitor); first/last hit, page views and engaged time of the
--   session in the hour, and the last hit of its previous active hour: a session's duration within
--   a range is the span of its first row there plus, for each later row, last_hit_at minus
--   previous_last_hit_at (the sum telescopes to last minus first).
-- kind 'company_visitor': company_id and visitor_id; first/last hit, page views and engaged time of
--   the pair in the hour.
-- kind 'company_session': company_id and session_id (and its visitor); first/last hit of the pair
--   in the hour (a company's distinct sessions).
-- previous_hour is 1970-01-01 for a key's first active hour. identified: the visitor was identified
-- when the pass wrote the row (an identification is a change of the visitor: the next pass writes
-- its rows again), so the identified visitors of a range are counted without a set of them.
CREATE TABLE IF NOT EXISTS {{local:first_hours}} {{on_cluster}} (
  organization_id UUID,
  kind Enum8('visitor' = 1, 'session' = 2, 'company_visitor' = 3, 'company_session' = 4),
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
  sign Int8
) ENGINE = {{sharded:CollapsingMergeTree(sign)}}
PARTITION BY toYYYYMM(hour)
PRIMARY KEY (organization_id, kind, hour)
ORDER BY (organization_id, kind, hour, company_id, visitor_id, session_id, previous_hour, first_hit_at,
  last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified);

-- By visitor: a visitor's rows sit on one shard on a cluster, so the pass's difference is right there.
{{distributed:first_hours:cityHash64(visitor_id)}};

CREATE TABLE IF NOT EXISTS {{local:first_hours_by_visitor}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  kind Enum8('visitor' = 1, 'session' = 2, 'company_visitor' = 3, 'company_session' = 4),
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
  sign Int8
) ENGINE = {{sharded:CollapsingMergeTree(sign)}}
PRIMARY KEY (organization_id, visitor_id)
ORDER BY (organization_id, visitor_id, kind, hour, company_id, session_id, previous_hour, first_hit_at,
  last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified)
SETTINGS index_granularity = 1024;

{{distributed:first_hours_by_visitor:cityHash64(visitor_id)}};

CREATE MATERIALIZED VIEW IF NOT EXISTS first_hours_by_visitor_mv {{on_cluster}} TO {{local:first_hours_by_visitor}} AS
SELECT organization_id, visitor_id, kind, hour, company_id, session_id, previous_hour, first_hit_at,
  last_hit_at, previous_last_hit_at, page_view_count, engaged_ms, identified, sign
FROM {{local:first_hours}};

-- The rows of first_hours summed by organization, kind, hour and previous hour: the figures of
-- everyone (no audience) are sums of a few rows per hour here. Whether a row counts in a range
-- depends only on its hour and its previous hour, so the sums stay exact: visitors and sessions
-- (`rows`, the sum of signs), the identified among them, page views and engaged time, and both
-- terms of a session's duration (the span of a first row, the step of a later one).
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
  later_span_ms Int64
) ENGINE = {{sharded:SummingMergeTree}}
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, kind, hour, previous_hour);

{{distributed:first_hour_counts:cityHash64(organization_id)}};

CREATE MATERIALIZED VIEW IF NOT EXISTS first_hour_counts_mv {{on_cluster}} TO {{local:first_hour_counts}} AS
SELECT organization_id, kind, hour, previous_hour,
  sum(sign) AS rows,
  sum(sign * identified) AS identified,
  sum(sign * toInt64(page_view_count)) AS page_view_count,
  sum(sign * toInt64(engaged_ms)) AS engaged_ms,
  sum(sign * (toInt64(toUnixTimestamp64Milli(last_hit_at)) - toInt64(toUnixTimestamp64Milli(first_hit_at)))) AS first_span_ms,
  sum(sign * (toInt64(toUnixTimestamp64Milli(last_hit_at)) - toInt64(toUnixTimestamp64Milli(previous_last_hit_at)))) AS later_span_ms
FROM {{local:first_hours}}
GROUP BY organization_id, kind, hour, previous_hour;

CREATE TABLE IF NOT EXISTS first_hours_passes {{on_cluster}} (
  until DateTime64(3, 'UTC'),
  finished_at DateTime64(3, 'UTC')
) ENGINE = {{global:MergeTree}}
ORDER BY until
TTL toDateTime(finished_at) + INTERVAL 7 DAY;
