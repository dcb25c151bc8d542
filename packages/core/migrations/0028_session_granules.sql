-- Sessions in granules of 64 rows and compressed blocks of 4-16 KB (bench/api/RESULTS.md, "Decision:
-- concurrent profiles share a read"). A batched profile read merges, under FINAL, every row of the
-- granules holding its visitors' rows, and decompresses the whole blocks holding those: a visitor
-- has a few rows, a granule of 256 rows holds some hundred other visitors'. Measured on 100,000
-- sessions, one read of 16 visitors: 20.8 ms in granules of 256, 15.3 in granules of 64, 13.3 with
-- the smaller blocks as well. The primary index grows four times, about 800 KB per million sessions.
--
-- index_granularity cannot be altered, so the table is copied into a new one with the same
-- columns, every row as it is stored (partial aggregate states merge as they would have), and the
-- two are exchanged. The three views writing into sessions stop first and start again at the end,
-- as they stood (0005, 0009, 0006); the server runs migrations before it takes traffic.
--
-- Every statement can run again: a run that stops before the exchange drops the copy and copies
-- again; one that stops after it copies the new table once more and drops the old one. On a
-- cluster a replicated table keeps the replication path it was created with, named after the
-- copy: a run stopped between the exchange and the drop finds that path taken when it creates the
-- copy again, and is finished by hand with the statements after the exchange.

DROP VIEW IF EXISTS sessions_mv {{on_cluster}};

DROP VIEW IF EXISTS visitor_identity_mv {{on_cluster}};

DROP VIEW IF EXISTS icp_scores_profile_mv {{on_cluster}};

DROP TABLE IF EXISTS sessions_granules {{on_cluster}} SYNC;

DROP TABLE IF EXISTS {{local:sessions_granules}} {{on_cluster}} SYNC;

CREATE TABLE IF NOT EXISTS {{local:sessions_granules}} {{on_cluster}} (
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
  identity AggregateFunction(argMax, String, UInt64),
  icp SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(UInt64)))
) ENGINE = {{sharded:AggregatingMergeTree}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (organization_id, visitor_id, session_id)
SETTINGS merge_selector_base = 10, index_granularity = 64, min_compress_block_size = 4096, max_compress_block_size = 16384;

{{distributed:sessions_granules:cityHash64(session_id)}};

-- Every row, by the same sharding key as sessions, so each lands on the shard that held it. On a
-- cluster the insert is synchronous: nothing may still be queued for the copy when it is exchanged.
-- In small blocks on one thread: the states of a block of sessions are large (`views`), and the
-- copy must fit the engine's default statement memory (STORE_QUERY_MEMORY_LIMIT, 384 MiB) on a
-- store of millions of sessions.
INSERT INTO sessions_granules SETTINGS insert_distributed_sync = 1, max_threads = 1, max_insert_threads = 1,
  max_block_size = 8192, max_insert_block_size = 65536, min_insert_block_size_rows = 65536,
  min_insert_block_size_bytes = 16777216
SELECT organization_id, visitor_id, session_id, started_at, ended_at, page_view_count, engaged_ms, max_scroll,
  first_page_view, exit_page, company_id, views, identity, icp
FROM sessions;

EXCHANGE TABLES {{local:sessions}} AND {{local:sessions_granules}} {{on_cluster}};

DROP TABLE IF EXISTS sessions_granules {{on_cluster}} SYNC;

DROP TABLE IF EXISTS {{local:sessions_granules}} {{on_cluster}} SYNC;

-- The three views of 0005, 0009 and 0006, as they stood.
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

CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_identity_mv {{on_cluster}} TO {{local:sessions}} AS
SELECT
  organization_id,
  id AS visitor_id,
  toUUID('00000000-0000-0000-0000-000000000000') AS session_id,
  max(updated_at) AS started_at,
  argMaxState(toJSONString(CAST((
    contact_id, email, personal_email, first_name, last_name, job_title, seniority, department,
    country, phone, linkedin_url, facebook_url, twitter_url, photo_url, location, address, address_2,
    city, state, postal_code, gender, age_range, income_range, net_worth, homeowner, married, children,
    company_id, identified_at, first_seen_at, last_seen_at, created_at, is_deleted, version
  ), 'Tuple(contact_id String, email String, personal_email String, first_name String, last_name String, job_title String, seniority String, department String, country String, phone String, linkedin_url String, facebook_url String, twitter_url String, photo_url String, location String, address String, address_2 String, city String, state String, postal_code String, gender String, age_range String, income_range String, net_worth String, homeowner String, married String, children String, company_id String, identified_at Nullable(DateTime64(3, \'UTC\')), first_seen_at DateTime64(3, \'UTC\'), last_seen_at DateTime64(3, \'UTC\'), created_at DateTime64(3, \'UTC\'), is_deleted UInt8, version UInt64)')), version) AS identity
FROM visitors
GROUP BY organization_id, id;

CREATE MATERIALIZED VIEW IF NOT EXISTS icp_scores_profile_mv {{on_cluster}} TO {{local:sessions}} AS
SELECT
  organization_id,
  visitor_id,
  toUUID('00000000-0000-0000-0000-000000000000') AS session_id,
  computed_at AS started_at,
  ([config_id], [toUInt64(toUnixTimestamp64Milli(computed_at)) * 1024 + persona * 512 + matched * 256 + score]) AS icp
FROM {{local:icp_scores}};
