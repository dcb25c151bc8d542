-- Contacts dataset (issue 12): the operator's people data, written by the contacts import
-- (`npm run cli -- import contacts FILE`). Like `companies`, an operator dataset: one full copy on
-- every node. Field names follow the webhook `visitor` object; demographics are '' when unknown.

-- Both tables are tuned for an import of millions of rows and for point lookups of scattered keys:
-- - parts under 128 MB (uncompressed) stay compact, one file per part instead of two per column:
--   an import writes a part per batch, and creating 70 files per insert cost more than the insert
--   itself (400,000 contacts in 20,000-row inserts: 2.3 s wide, 1.0 s compact);
-- - granules of 256 rows and compression blocks of 4-16 KB, so finding one contact decompresses
--   a few KB per column, not a 64 KB-1 MB block: 150 contacts scattered over a million, whole
--   rows, in 60 ms instead of 190 ms (8,192-row granules, default blocks), for about 5 % more disk
--   and a tenth more CPU per import.

-- One row per contact. `id` is the contact's identity: its `id` in the file, else its normalized
-- email, else its normalized personal email, else its normalized LinkedIn URL, so a re-imported
-- contact replaces its row. Emails are stored normalized (trimmed, lowercased); their SHA-256
-- (lowercase hex) is computed here, in the engine, when the import leaves the column out.
CREATE TABLE IF NOT EXISTS contacts {{on_cluster}} (
  id String,
  email String DEFAULT '',
  email_sha256 String DEFAULT if(email = '', '', lower(hex(SHA256(email)))),
  personal_email String DEFAULT '',
  personal_email_sha256 String DEFAULT if(personal_email = '', '', lower(hex(SHA256(personal_email)))),
  first_name String DEFAULT '',
  last_name String DEFAULT '',
  job_title String DEFAULT '',
  seniority String DEFAULT '',
  department String DEFAULT '',
  phone String DEFAULT '',
  linkedin_url String DEFAULT '',
  facebook_url String DEFAULT '',
  twitter_url String DEFAULT '',
  photo_url String DEFAULT '',
  location String DEFAULT '',
  address String DEFAULT '',
  address_2 String DEFAULT '',
  city String DEFAULT '',
  state String DEFAULT '',
  postal_code String DEFAULT '',
  country String DEFAULT '',
  gender String DEFAULT '',
  age_range String DEFAULT '',
  income_range String DEFAULT '',
  net_worth String DEFAULT '',
  homeowner String DEFAULT '',
  married String DEFAULT '',
  children String DEFAULT '',
  company_id String DEFAULT '',
  company_domain String DEFAULT '',
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY id
SETTINGS min_bytes_for_wide_part = 134217728, index_granularity = 256, min_compress_block_size = 4096, max_compress_block_size = 16384;

-- Identification's lookup: every key of every contact (its email, personal email and the SHA-256
-- of each) -> the contact, so one query finds the contacts of a whole batch of identify hits. A key
-- belongs to the contact that claimed it last.
CREATE TABLE IF NOT EXISTS contact_keys {{on_cluster}} (
  key String,
  contact_id String,
  updated_at DateTime64(3, 'UTC'),
  version UInt64,
  is_deleted UInt8 DEFAULT 0
) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}}
ORDER BY key
SETTINGS min_bytes_for_wide_part = 134217728, index_granularity = 256, min_compress_block_size = 4096, max_compress_block_size = 16384;

-- The import writes the keys through this view, in the same insert as the contacts (each block of
-- contacts brings its keys), with the row's version. Re-importing a contact does not remove the
-- keys it no longer has: the lookup (findContactsByKeys) joins each key to the contact's current
-- row and keeps it only while it is still one of that row's emails or hashes, so an old key stops
-- matching at once, without a read before every write.
CREATE MATERIALIZED VIEW IF NOT EXISTS contact_keys_mv {{on_cluster}} TO contact_keys AS
SELECT key, id AS contact_id, updated_at, version, is_deleted
FROM contacts
ARRAY JOIN arrayDistinct(arrayFilter(k -> k != '', [email, personal_email, email_sha256, personal_email_sha256])) AS key;
