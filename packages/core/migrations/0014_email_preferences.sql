-- Email preferences (issue 17; DESIGN.md, "Email"): a partner's defaults for the organizations it
-- manages, and an organization's overrides. One row per (owner, key); an absent row means "not
-- set" (a partner default is then enabled, an organization inherits its partner's).
CREATE TABLE IF NOT EXISTS email_preferences {{on_cluster}} (
  -- 'partner:<uuid>' or 'organization:<uuid>'
  owner String,
  key LowCardinality(String),
  enabled Bool,
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY (owner, key);
