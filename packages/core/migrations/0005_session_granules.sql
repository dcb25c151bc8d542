-- Sessions in granules of 256 rows instead of 8,192. A visitor profile reads the few sessions of one
-- visitor; with FINAL, the engine deserializes the packed first-page-view state of every row of the
-- granules it touches, so the granule size is what a profile read costs: measured on 100,000
-- sessions, 33 ms of CPU per read at 8,192 rows, 9 ms at 256 (bench/api/RESULTS.md). The primary
-- index grows 32 times, about 200 KB per million sessions.
--
-- The table is rebuilt from page_views as in 0004, with the same columns and view; every statement
-- can run again.

DROP VIEW IF EXISTS sessions_mv {{on_cluster}};

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
  company_id AggregateFunction(argMax, String, DateTime64(3, 'UTC'))
) ENGINE = {{sharded:AggregatingMergeTree}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (organization_id, visitor_id, session_id)
SETTINGS merge_selector_base = 10, index_granularity = 256;

{{distributed:sessions:cityHash64(session_id)}};

INSERT INTO sessions
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
  argMaxStateIf(company_id, timestamp, company_id != '') AS company_id
FROM page_views
GROUP BY organization_id, visitor_id, session_id;

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
  argMaxStateIf(company_id, timestamp, company_id != '') AS company_id
FROM {{local:page_views}}
GROUP BY organization_id, visitor_id, session_id;
