-- Initial schema. Entities are ReplacingMergeTree(version, is_deleted) rows read with FINAL;
-- events are append-only MergeTree; sessions are aggregated from page_views by a materialized view.
-- Placeholders are rendered by src/store/render-ddl.ts (single node or cluster).

CREATE TABLE IF NOT EXISTS partners {{on_cluster}} (
  id UUID,
  name String,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY id;

CREATE TABLE IF NOT EXISTS organizations {{on_cluster}} (
  id UUID,
  name String,
  domain String DEFAULT '',
  product_type LowCardinality(String) DEFAULT 'standard',
  is_agency Bool DEFAULT false,
  agency_id Nullable(UUID),
  partner_id Nullable(UUID),
  max_overages Nullable(Float64),
  auto_phone_enrichment Bool DEFAULT false,
  created_by_user_id Nullable(UUID),
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY id;

CREATE TABLE IF NOT EXISTS users {{on_cluster}} (
  id UUID,
  email String,
  name String DEFAULT '',
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY id;

CREATE TABLE IF NOT EXISTS memberships {{on_cluster}} (
  organization_id UUID,
  user_id UUID,
  role LowCardinality(String),
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (organization_id, user_id);

-- Organization keys (organization_id set) and partner keys (partner_id set). Only the SHA-256 of a
-- key is stored; key_prefix is its first 12 characters.
CREATE TABLE IF NOT EXISTS api_keys {{on_cluster}} (
  id String,
  kind LowCardinality(String),
  organization_id Nullable(UUID),
  partner_id Nullable(UUID),
  created_by_user_id Nullable(UUID),
  name String,
  key_hash String,
  key_prefix String,
  scopes Array(LowCardinality(String)),
  status LowCardinality(String),
  expires_at Nullable(DateTime64(3, 'UTC')),
  last_used_at Nullable(DateTime64(3, 'UTC')),
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0,
  INDEX key_hash_idx key_hash TYPE bloom_filter GRANULARITY 1
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY id;

CREATE TABLE IF NOT EXISTS pixel_configs {{on_cluster}} (
  id String,
  organization_id UUID,
  tracking_key String,
  allowed_referrers Array(String),
  verified_domains Array(String),
  ip_tracking Bool DEFAULT true,
  respect_privacy_signals Bool DEFAULT false,
  form_capture Bool DEFAULT false,
  icp_settings String DEFAULT '{}',
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY organization_id;

CREATE TABLE IF NOT EXISTS visitors {{on_cluster}} (
  id UUID,
  organization_id UUID,
  email String DEFAULT '',
  first_name String DEFAULT '',
  last_name String DEFAULT '',
  job_title String DEFAULT '',
  linkedin_url String DEFAULT '',
  company_id String DEFAULT '',
  identified_at Nullable(DateTime64(3, 'UTC')),
  first_seen_at DateTime64(3, 'UTC'),
  last_seen_at DateTime64(3, 'UTC'),
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (organization_id, id);

-- One row per pixel event (pageview, engagement, identify), enriched at ingest.
CREATE TABLE IF NOT EXISTS {{local:page_views}} {{on_cluster}} (
  event_id UUID,
  organization_id UUID,
  visitor_id UUID,
  session_id UUID,
  type LowCardinality(String),
  timestamp DateTime64(3, 'UTC'),
  received_at DateTime64(3, 'UTC'),
  url String,
  path String,
  hostname LowCardinality(String),
  title String,
  referrer String,
  referrer_domain LowCardinality(String),
  search_engine LowCardinality(String),
  search_term String,
  utm_source String,
  utm_medium String,
  utm_campaign String,
  utm_term String,
  utm_content String,
  tracking_params Map(String, String),
  screen_width UInt16,
  screen_height UInt16,
  language LowCardinality(String),
  timezone LowCardinality(String),
  engaged_ms UInt32,
  max_scroll UInt8,
  email String,
  ip String,
  country LowCardinality(String),
  region LowCardinality(String),
  city LowCardinality(String),
  isp LowCardinality(String),
  asn UInt32,
  connection_type LowCardinality(String),
  is_hosting Bool,
  is_anonymous Bool,
  user_agent String,
  device_type LowCardinality(String),
  browser LowCardinality(String),
  browser_version LowCardinality(String),
  os LowCardinality(String),
  os_version LowCardinality(String),
  device_model LowCardinality(String),
  company_id String
) ENGINE = {{sharded:MergeTree}}
PARTITION BY toYYYYMM(timestamp)
ORDER BY (organization_id, visitor_id, timestamp);

{{distributed:page_views:cityHash64(session_id)}};

-- Sessions: one partial row per inserted block, combined at read time with GROUP BY, so every
-- field is right before background merges. Page views are sharded by session, so each shard
-- aggregates whole sessions.
CREATE TABLE IF NOT EXISTS {{local:sessions}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  session_id UUID,
  started_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  ended_at SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  page_view_count SimpleAggregateFunction(sum, UInt64),
  engaged_ms SimpleAggregateFunction(sum, UInt64),
  max_scroll SimpleAggregateFunction(max, UInt8),
  landing_page AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  entry_page AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  exit_page AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
  referrer AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  search_engine AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  search_term AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_source AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_medium AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_campaign AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_term AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  utm_content AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  tracking_params AggregateFunction(argMin, Map(String, String), DateTime64(3, 'UTC')),
  screen_width AggregateFunction(argMin, UInt16, DateTime64(3, 'UTC')),
  screen_height AggregateFunction(argMin, UInt16, DateTime64(3, 'UTC')),
  language AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  timezone AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  ip AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  country AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  region AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  city AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  isp AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  asn AggregateFunction(argMin, UInt32, DateTime64(3, 'UTC')),
  connection_type AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  is_hosting AggregateFunction(argMin, Bool, DateTime64(3, 'UTC')),
  is_anonymous AggregateFunction(argMin, Bool, DateTime64(3, 'UTC')),
  user_agent AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  device_type AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  browser AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  browser_version AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  os AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  os_version AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  device_model AggregateFunction(argMin, String, DateTime64(3, 'UTC')),
  company_id AggregateFunction(argMax, String, DateTime64(3, 'UTC'))
) ENGINE = {{sharded:AggregatingMergeTree}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (organization_id, visitor_id, session_id);

{{distributed:sessions:cityHash64(session_id)}};

-- Session attributes come from the session's page views (first for where it came from, last for
-- the exit page); engagement events extend the duration and the scroll depth.
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
  argMinIfState(url, timestamp, type = 'pageview') AS landing_page,
  argMinIfState(path, timestamp, type = 'pageview') AS entry_page,
  argMaxIfState(path, timestamp, type = 'pageview') AS exit_page,
  argMinIfState(referrer, timestamp, type = 'pageview') AS referrer,
  argMinIfState(toString(search_engine), timestamp, type = 'pageview') AS search_engine,
  argMinIfState(search_term, timestamp, type = 'pageview') AS search_term,
  argMinIfState(utm_source, timestamp, type = 'pageview') AS utm_source,
  argMinIfState(utm_medium, timestamp, type = 'pageview') AS utm_medium,
  argMinIfState(utm_campaign, timestamp, type = 'pageview') AS utm_campaign,
  argMinIfState(utm_term, timestamp, type = 'pageview') AS utm_term,
  argMinIfState(utm_content, timestamp, type = 'pageview') AS utm_content,
  argMinIfState(tracking_params, timestamp, type = 'pageview') AS tracking_params,
  argMinIfState(screen_width, timestamp, type = 'pageview') AS screen_width,
  argMinIfState(screen_height, timestamp, type = 'pageview') AS screen_height,
  argMinIfState(toString(language), timestamp, type = 'pageview') AS language,
  argMinIfState(toString(timezone), timestamp, type = 'pageview') AS timezone,
  argMinIfState(ip, timestamp, type = 'pageview') AS ip,
  argMinIfState(toString(country), timestamp, type = 'pageview') AS country,
  argMinIfState(toString(region), timestamp, type = 'pageview') AS region,
  argMinIfState(toString(city), timestamp, type = 'pageview') AS city,
  argMinIfState(toString(isp), timestamp, type = 'pageview') AS isp,
  argMinIfState(asn, timestamp, type = 'pageview') AS asn,
  argMinIfState(toString(connection_type), timestamp, type = 'pageview') AS connection_type,
  argMinIfState(is_hosting, timestamp, type = 'pageview') AS is_hosting,
  argMinIfState(is_anonymous, timestamp, type = 'pageview') AS is_anonymous,
  argMinIfState(user_agent, timestamp, type = 'pageview') AS user_agent,
  argMinIfState(toString(device_type), timestamp, type = 'pageview') AS device_type,
  argMinIfState(toString(browser), timestamp, type = 'pageview') AS browser,
  argMinIfState(toString(browser_version), timestamp, type = 'pageview') AS browser_version,
  argMinIfState(toString(os), timestamp, type = 'pageview') AS os,
  argMinIfState(toString(os_version), timestamp, type = 'pageview') AS os_version,
  argMinIfState(toString(device_model), timestamp, type = 'pageview') AS device_model,
  argMaxIfState(company_id, timestamp, company_id != '') AS company_id
FROM {{local:page_views}}
GROUP BY organization_id, visitor_id, session_id;
