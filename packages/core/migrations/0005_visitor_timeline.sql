-- Sessions become the visitor's timeline, so a visitor profile reads one table, once: the embedded
-- engine charges for every table and column a statement reads, whatever the row count, and a
-- profile that read visitors, sessions and page_views cost three point reads and more
-- (bench/api/RESULTS.md). Three changes:
--
-- * `views`: each session's page views (time, URL, title), so the profile's page list comes with
--   its sessions instead of from a read of page_views.
-- * `identity`: one row per identified visitor, with the nil session id, holding the latest version
--   of its `visitors` row as JSON (argMax by version). `visitor_identity_mv` writes it on every
--   write to `visitors`, which stays the entity and the only place visitors are written; a
--   tombstone carries `is_deleted`. On a cluster, versions written on different nodes can sit in
--   different shards' rows: readers take the highest `version` among the identity rows. Readers of sessions as sessions skip the nil session id
--   (`session_id != toUUID('00000000-0000-0000-0000-000000000000')`).
-- * granules of 256 rows instead of 8,192: a profile reads one visitor's few rows, and FINAL
--   deserializes the aggregate states of every row of the granules it touches (33 ms of CPU per
--   read at 8,192 rows, 9 ms at 256, on 100,000 sessions). The primary index grows 32 times,
--   about 200 KB per million sessions.
--
-- The table is rebuilt from page_views and visitors, as 0004 rebuilt it; every statement can run
-- again.

DROP VIEW IF EXISTS sessions_mv {{on_cluster}};

DROP VIEW IF EXISTS visitor_identity_mv {{on_cluster}};

-- SYNC: on a cluster the replicated table's ZooKeeper path must be gone before the same path is
-- created again just below (an Atomic database otherwise frees it minutes later).
DROP TABLE IF EXISTS sessions {{on_cluster}} SYNC;

DROP TABLE IF EXISTS {{local:sessions}} {{on_cluster}} SYNC;

CREATE TABLE IF NOT EXISTS {{local:sessions}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  session_id UUID,
  started_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  ended_at SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  page_view_count SimpleAggregateFunction(sum, UInt64),
  engaged_ms SimpleAggregateFunction(sum, UInt64),
  max_scroll SimpleAggregateFunction(max, UInt8),
  first_page_view AggregateFunction(argMin, Tuple(
    landing_page String,
    entry_page String,
    referrer String,
    search_engine String,
    search_term String,
    utm_source String,
    utm_medium String,
    utm_campaign String,
    utm_term String,
    utm_content String,
    tracking_params Map(String, String),
    screen_width UInt16,
    screen_height UInt16,
    language String,
    timezone String,
    ip String,
    country String,
    region String,
    city String,
    isp String,
    asn UInt32,
    connection_type String,
    is_hosting Bool,
    is_anonymous Bool,
    user_agent String,
    device_type String,
    browser String,
    browser_version String,
    os String,
    os_version String,
    device_model String
  ), DateTime64(3, 'UTC')),
  exit_page AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
  company_id AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
  views AggregateFunction(groupArray, Tuple(DateTime64(3, 'UTC'), String, String)),
  identity AggregateFunction(argMax, String, UInt64)
) ENGINE = {{sharded:AggregatingMergeTree}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (organization_id, visitor_id, session_id)
SETTINGS merge_selector_base = 10, index_granularity = 256;

{{distributed:sessions:cityHash64(session_id)}};

INSERT INTO sessions (organization_id, visitor_id, session_id, started_at, ended_at, page_view_count, engaged_ms, max_scroll,
  first_page_view, exit_page, company_id, views)
SELECT
  organization_id,
  visitor_id,
  session_id,
  min(timestamp) AS started_at,
  max(timestamp) AS ended_at,
  toUInt64(countIf(type = 'pageview')) AS page_view_count,
  toUInt64(sum(engaged_ms)) AS engaged_ms,
  max(max_scroll) AS max_scroll,
  argMinStateIf(CAST((
    url, path, referrer, toString(search_engine), search_term,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content, tracking_params,
    screen_width, screen_height, toString(language), toString(timezone),
    ip, toString(country), toString(region), toString(city), toString(isp), asn,
    toString(connection_type), is_hosting, is_anonymous,
    user_agent, toString(device_type), toString(browser), toString(browser_version),
    toString(os), toString(os_version), toString(device_model)
  ), 'Tuple(landing_page String, entry_page String, referrer String, search_engine String, search_term String, utm_source String, utm_medium String, utm_campaign String, utm_term String, utm_content String, tracking_params Map(String, String), screen_width UInt16, screen_height UInt16, language String, timezone String, ip String, country String, region String, city String, isp String, asn UInt32, connection_type String, is_hosting Bool, is_anonymous Bool, user_agent String, device_type String, browser String, browser_version String, os String, os_version String, device_model String)'),
  timestamp, type = 'pageview') AS first_page_view,
  argMaxStateIf(path, timestamp, type = 'pageview') AS exit_page,
  argMaxStateIf(company_id, timestamp, company_id != '') AS company_id,
  groupArrayStateIf((timestamp, url, title), type = 'pageview') AS views
FROM page_views
GROUP BY organization_id, visitor_id, session_id;

-- Every visitor's identity row, from every version of its visitors row.
INSERT INTO sessions (organization_id, visitor_id, session_id, started_at, identity)
SELECT
  organization_id,
  id AS visitor_id,
  toUUID('00000000-0000-0000-0000-000000000000') AS session_id,
  max(updated_at) AS started_at,
  argMaxState(toJSONString(CAST((
    email, first_name, last_name, job_title, linkedin_url, company_id, identified_at,
    first_seen_at, last_seen_at, is_deleted, version
  ), 'Tuple(email String, first_name String, last_name String, job_title String, linkedin_url String, company_id String, identified_at Nullable(DateTime64(3, \'UTC\')), first_seen_at DateTime64(3, \'UTC\'), last_seen_at DateTime64(3, \'UTC\'), is_deleted UInt8, version UInt64)')), version) AS identity
FROM visitors
GROUP BY organization_id, id;

-- The same SELECT as the rebuild above, for every block inserted from now on.
CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv {{on_cluster}} TO {{local:sessions}} AS
SELECT
  organization_id,
  visitor_id,
  session_id,
  min(timestamp) AS started_at,
  max(timestamp) AS ended_at,
  toUInt64(countIf(type = 'pageview')) AS page_view_count,
  toUInt64(sum(engaged_ms)) AS engaged_ms,
  max(max_scroll) AS max_scroll,
  argMinStateIf(CAST((
    url, path, referrer, toString(search_engine), search_term,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content, tracking_params,
    screen_width, screen_height, toString(language), toString(timezone),
    ip, toString(country), toString(region), toString(city), toString(isp), asn,
    toString(connection_type), is_hosting, is_anonymous,
    user_agent, toString(device_type), toString(browser), toString(browser_version),
    toString(os), toString(os_version), toString(device_model)
  ), 'Tuple(landing_page String, entry_page String, referrer String, search_engine String, search_term String, utm_source String, utm_medium String, utm_campaign String, utm_term String, utm_content String, tracking_params Map(String, String), screen_width UInt16, screen_height UInt16, language String, timezone String, ip String, country String, region String, city String, isp String, asn UInt32, connection_type String, is_hosting Bool, is_anonymous Bool, user_agent String, device_type String, browser String, browser_version String, os String, os_version String, device_model String)'),
  timestamp, type = 'pageview') AS first_page_view,
  argMaxStateIf(path, timestamp, type = 'pageview') AS exit_page,
  argMaxStateIf(company_id, timestamp, company_id != '') AS company_id,
  groupArrayStateIf((timestamp, url, title), type = 'pageview') AS views
FROM {{local:page_views}}
GROUP BY organization_id, visitor_id, session_id;

-- The identity row of a visitor, for every write to visitors from now on.
CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_identity_mv {{on_cluster}} TO {{local:sessions}} AS
SELECT
  organization_id,
  id AS visitor_id,
  toUUID('00000000-0000-0000-0000-000000000000') AS session_id,
  max(updated_at) AS started_at,
  argMaxState(toJSONString(CAST((
    email, first_name, last_name, job_title, linkedin_url, company_id, identified_at,
    first_seen_at, last_seen_at, is_deleted, version
  ), 'Tuple(email String, first_name String, last_name String, job_title String, linkedin_url String, company_id String, identified_at Nullable(DateTime64(3, \'UTC\')), first_seen_at DateTime64(3, \'UTC\'), last_seen_at DateTime64(3, \'UTC\'), is_deleted UInt8, version UInt64)')), version) AS identity
FROM visitors
GROUP BY organization_id, id;
