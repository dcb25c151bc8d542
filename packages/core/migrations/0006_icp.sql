-- ICP configs, visitor facts and scores (packages/core/src/icp/README.md tells the whole story).
--
-- * `icp_configs`: organization-level configs (a filter) and partner-level configs (rules), one
--   slug namespace per organization.
-- * `visitor_facts`: one row per (organization, visitor) with what the rules can ask about a
--   visitor's activity and identity, kept current by materialized views on page_views and
--   visitors. Company fields are joined from `companies` when a visitor is scored, so a re-import
--   of companies counts at the next scoring without rewriting any fact.
-- * `icp_scores`: per (organization, config, visitor): matched, persona, score, computed_at.
-- * `visitor_changes`: which visitors had new activity or a new identification, and when; the
--   incremental re-scoring reads it instead of scanning facts. Rows live a day.
-- * `sessions.icp`: every score of a visitor, folded into its identity row, so the profile still
--   reads one table once.

CREATE TABLE IF NOT EXISTS icp_configs {{on_cluster}} (
  id String,
  organization_id UUID,
  kind LowCardinality(String),
  slug String,
  name String,
  filter String DEFAULT '',
  rules String,
  priority Int32 DEFAULT 0,
  is_active Bool DEFAULT true,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (organization_id, id);

-- Partial rows per inserted block, merged when read (GROUP BY with the -Merge combinators, which is
-- also right on a cluster, where one visitor's page views sit on several shards).
CREATE TABLE IF NOT EXISTS {{local:visitor_facts}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  utm_source SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  utm_medium SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  utm_campaign SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  utm_term SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  utm_content SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  pages SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  page_view_count SimpleAggregateFunction(sum, UInt64),
  sessions AggregateFunction(uniqExact, UUID),
  first_seen_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_seen_at SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  geo AggregateFunction(argMax, Tuple(
    country String,
    region String,
    city String,
    is_hosting Bool,
    is_anonymous Bool
  ), DateTime64(3, 'UTC')),
  ip_company_id AggregateFunction(argMax, String, DateTime64(3, 'UTC')),
  contact AggregateFunction(argMax, Tuple(
    email String,
    job_title String,
    seniority String,
    department String,
    country String,
    linkedin_url String,
    company_id String,
    is_deleted UInt8
  ), UInt64)
) ENGINE = {{sharded:AggregatingMergeTree}}
ORDER BY (organization_id, visitor_id)
SETTINGS merge_selector_base = 10;

{{distributed:visitor_facts:cityHash64(visitor_id)}};

-- Facts of the page views already stored, then of every block inserted from now on. Pages are
-- paths (no query string), at most 1,000 distinct ones per visitor per block; UTM values and pages
-- are lowercased by the rules, so they are stored as seen.
INSERT INTO visitor_facts (organization_id, visitor_id, utm_source, utm_medium, utm_campaign, utm_term,
  utm_content, pages, page_view_count, sessions, first_seen_at, last_seen_at, geo, ip_company_id)
SELECT
  organization_id,
  visitor_id,
  groupUniqArrayIf(utm_source, utm_source != '') AS utm_source,
  groupUniqArrayIf(utm_medium, utm_medium != '') AS utm_medium,
  groupUniqArrayIf(utm_campaign, utm_campaign != '') AS utm_campaign,
  groupUniqArrayIf(utm_term, utm_term != '') AS utm_term,
  groupUniqArrayIf(utm_content, utm_content != '') AS utm_content,
  groupUniqArrayIf(1000)(path, type = 'pageview') AS pages,
  toUInt64(countIf(type = 'pageview')) AS page_view_count,
  uniqExactState(session_id) AS sessions,
  min(timestamp) AS first_seen_at,
  max(timestamp) AS last_seen_at,
  argMaxState(CAST((toString(country), toString(region), toString(city), is_hosting, is_anonymous),
    'Tuple(country String, region String, city String, is_hosting Bool, is_anonymous Bool)'), timestamp) AS geo,
  argMaxStateIf(company_id, timestamp, company_id != '') AS ip_company_id
FROM page_views
GROUP BY organization_id, visitor_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_facts_activity_mv {{on_cluster}} TO {{local:visitor_facts}} AS
SELECT
  organization_id,
  visitor_id,
  groupUniqArrayIf(utm_source, utm_source != '') AS utm_source,
  groupUniqArrayIf(utm_medium, utm_medium != '') AS utm_medium,
  groupUniqArrayIf(utm_campaign, utm_campaign != '') AS utm_campaign,
  groupUniqArrayIf(utm_term, utm_term != '') AS utm_term,
  groupUniqArrayIf(utm_content, utm_content != '') AS utm_content,
  groupUniqArrayIf(1000)(path, type = 'pageview') AS pages,
  toUInt64(countIf(type = 'pageview')) AS page_view_count,
  uniqExactState(session_id) AS sessions,
  min(timestamp) AS first_seen_at,
  max(timestamp) AS last_seen_at,
  argMaxState(CAST((toString(country), toString(region), toString(city), is_hosting, is_anonymous),
    'Tuple(country String, region String, city String, is_hosting Bool, is_anonymous Bool)'), timestamp) AS geo,
  argMaxStateIf(company_id, timestamp, company_id != '') AS ip_company_id
FROM {{local:page_views}}
GROUP BY organization_id, visitor_id;

-- A contact's seniority, department and country (the contacts dataset's fields the filter
-- vocabulary names) live on the visitor row with the rest of its contact fields.
ALTER TABLE visitors {{on_cluster}}
  ADD COLUMN IF NOT EXISTS seniority String DEFAULT '' AFTER job_title,
  ADD COLUMN IF NOT EXISTS department String DEFAULT '' AFTER seniority,
  ADD COLUMN IF NOT EXISTS country String DEFAULT '' AFTER department;

-- The contact side, from every version of every visitors row (the latest version wins).
INSERT INTO visitor_facts (organization_id, visitor_id, first_seen_at, last_seen_at, contact)
SELECT
  organization_id,
  id AS visitor_id,
  min(first_seen_at) AS first_seen_at,
  max(last_seen_at) AS last_seen_at,
  argMaxState(CAST((email, job_title, seniority, department, country, linkedin_url, company_id, is_deleted),
    'Tuple(email String, job_title String, seniority String, department String, country String, linkedin_url String, company_id String, is_deleted UInt8)'), version) AS contact
FROM visitors
GROUP BY organization_id, id;

CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_facts_contact_mv {{on_cluster}} TO {{local:visitor_facts}} AS
SELECT
  organization_id,
  id AS visitor_id,
  min(first_seen_at) AS first_seen_at,
  max(last_seen_at) AS last_seen_at,
  argMaxState(CAST((email, job_title, seniority, department, country, linkedin_url, company_id, is_deleted),
    'Tuple(email String, job_title String, seniority String, department String, country String, linkedin_url String, company_id String, is_deleted UInt8)'), version) AS contact
FROM visitors
GROUP BY organization_id, id;

CREATE TABLE IF NOT EXISTS {{local:visitor_changes}} {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  changed_at DateTime64(3, 'UTC')
) ENGINE = {{sharded:MergeTree}}
ORDER BY changed_at
TTL toDateTime(changed_at) + INTERVAL 1 DAY;

{{distributed:visitor_changes:cityHash64(visitor_id)}};

-- When a row was written, not when its event happened: a replayed spool batch is new activity too.
CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_changes_activity_mv {{on_cluster}} TO {{local:visitor_changes}} AS
SELECT organization_id, visitor_id, now64(3) AS changed_at
FROM {{local:page_views}}
GROUP BY organization_id, visitor_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_changes_contact_mv {{on_cluster}} TO {{local:visitor_changes}} AS
SELECT organization_id, id AS visitor_id, now64(3) AS changed_at
FROM visitors
GROUP BY organization_id, id;

-- Scores: a visitor's rows sit on one shard, so FINAL is right on a cluster too.
CREATE TABLE IF NOT EXISTS {{local:icp_scores}} {{on_cluster}} (
  organization_id UUID,
  config_id String,
  visitor_id UUID,
  matched UInt8,
  persona UInt8,
  score UInt8,
  computed_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = {{sharded:ReplacingMergeTree(version)}}
ORDER BY (organization_id, config_id, visitor_id)
SETTINGS merge_selector_base = 10;

{{distributed:icp_scores:cityHash64(visitor_id)}};

-- Every score of a visitor, on its identity row in sessions: config id -> computed_at in
-- milliseconds * 1024 + persona * 512 + matched * 256 + score. maxMap keeps each config's latest.
-- One row per score row, no GROUP BY: a block holds each visitor once per config, and aggregating
-- a million rows with maxMap in the view cost three times the insert itself.
ALTER TABLE {{local:sessions}} {{on_cluster}}
  ADD COLUMN IF NOT EXISTS icp SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(UInt64)));

{{distributed_alter:sessions:ADD COLUMN IF NOT EXISTS icp SimpleAggregateFunction(maxMap, Tuple(Array(String), Array(UInt64)))}};

CREATE MATERIALIZED VIEW IF NOT EXISTS icp_scores_profile_mv {{on_cluster}} TO {{local:sessions}} AS
SELECT
  organization_id,
  visitor_id,
  toUUID('00000000-0000-0000-0000-000000000000') AS session_id,
  computed_at AS started_at,
  ([config_id], [toUInt64(toUnixTimestamp64Milli(computed_at)) * 1024 + persona * 512 + matched * 256 + score]) AS icp
FROM {{local:icp_scores}};
