-- Privacy requests (packages/core/src/privacy).
--
-- * `erasures`: the record of each erasure of a person: which kind of key named them (an email,
--   a hash of one, a visitor id), who asked, when, and how many rows each table lost. Never the key
--   or anything else about the person: the record must not undo the erasure.
-- * `erased_visitors`: the SHA-256 of each erased visitor id (with its organization), so a later
--   hit from the same browser, which still sends that id, starts a new anonymous visitor instead
--   of adding to a person who asked to be forgotten. A visitor id is random: its hash names no one.
CREATE TABLE IF NOT EXISTS erasures {{on_cluster}} (
  id String,
  organization_id UUID,
  key_kind LowCardinality(String),
  requested_by String,
  requested_at DateTime64(3, 'UTC'),
  finished_at DateTime64(3, 'UTC'),
  visitors UInt32,
  contacts UInt32,
  rows Map(String, UInt64)
) ENGINE = {{global:MergeTree}}
ORDER BY (organization_id, requested_at, id);

CREATE TABLE IF NOT EXISTS erased_visitors {{on_cluster}} (
  organization_id UUID,
  visitor_hash String,
  erased_at DateTime64(3, 'UTC')
) ENGINE = {{global:ReplacingMergeTree}}
ORDER BY (organization_id, visitor_hash);

-- `privacy_settings`: an organization's own retention (raw data and full IP addresses; 0 takes the
-- server's default) and its company-only regions (`company_only` 1: hits from those countries
-- identify companies, never people, and keep no IP address; `company_only_countries` ISO 3166
-- alpha-2 codes, empty: the EEA), an entity like the pixel configuration.
CREATE TABLE IF NOT EXISTS privacy_settings {{on_cluster}} (
  organization_id UUID,
  retention_days UInt32,
  ip_retention_days UInt32,
  company_only UInt8 DEFAULT 0,
  company_only_countries Array(String),
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY organization_id;
