-- Sessions, packed: the attributes a session takes from its first page view are one argMin state
-- over a named tuple instead of 33 argMin states, one per column. Each inserted block then builds
-- three aggregate states per session instead of 36, merges rewrite three state columns instead of
-- 36, and a profile read merges three. The tuple also keeps a session's first-page-view fields
-- from one and the same page view when two share a timestamp.
--
-- The table is rebuilt from page_views, which hold every event. Every statement can run again: a
-- run that stops part-way drops what it built and rebuilds it. Page views written while this
-- migration runs are not in sessions; the server runs migrations before it takes traffic.

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
SETTINGS merge_selector_base = 10;

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
