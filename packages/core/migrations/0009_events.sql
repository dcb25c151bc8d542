-- Identification (issue 12): a visitor takes every field of its contact, and domain events are
-- stored before they are handed to the job queue.

-- The contact fields of the webhook `visitor` object that the visitor row lacked.
ALTER TABLE visitors {{on_cluster}}
  ADD COLUMN IF NOT EXISTS contact_id String DEFAULT '' AFTER organization_id,
  ADD COLUMN IF NOT EXISTS personal_email String DEFAULT '' AFTER email,
  ADD COLUMN IF NOT EXISTS phone String DEFAULT '' AFTER country,
  ADD COLUMN IF NOT EXISTS facebook_url String DEFAULT '' AFTER linkedin_url,
  ADD COLUMN IF NOT EXISTS twitter_url String DEFAULT '' AFTER facebook_url,
  ADD COLUMN IF NOT EXISTS photo_url String DEFAULT '' AFTER twitter_url,
  ADD COLUMN IF NOT EXISTS location String DEFAULT '' AFTER photo_url,
  ADD COLUMN IF NOT EXISTS address String DEFAULT '' AFTER location,
  ADD COLUMN IF NOT EXISTS address_2 String DEFAULT '' AFTER address,
  ADD COLUMN IF NOT EXISTS city String DEFAULT '' AFTER address_2,
  ADD COLUMN IF NOT EXISTS state String DEFAULT '' AFTER city,
  ADD COLUMN IF NOT EXISTS postal_code String DEFAULT '' AFTER state,
  ADD COLUMN IF NOT EXISTS gender String DEFAULT '' AFTER postal_code,
  ADD COLUMN IF NOT EXISTS age_range String DEFAULT '' AFTER gender,
  ADD COLUMN IF NOT EXISTS income_range String DEFAULT '' AFTER age_range,
  ADD COLUMN IF NOT EXISTS net_worth String DEFAULT '' AFTER income_range,
  ADD COLUMN IF NOT EXISTS homeowner String DEFAULT '' AFTER net_worth,
  ADD COLUMN IF NOT EXISTS married String DEFAULT '' AFTER homeowner,
  ADD COLUMN IF NOT EXISTS children String DEFAULT '' AFTER married;

-- The profile's identity row carries the whole contact from now on (the view of 0005, with every
-- field). Rows written before keep their fields; readers default the ones they lack.
DROP VIEW IF EXISTS visitor_identity_mv {{on_cluster}};

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

-- Domain events (visitor.identified, ...): written before anything acts on them, with an id made
-- from what the event is about, so writing one twice (two processes, a replay after a crash) keeps
-- one. Consumers are at-least-once and deduplicate by event_id. `dispatched_at` is set by a later
-- version once the event is on the job queue, so a sweep finds the ones a crash left behind.
CREATE TABLE IF NOT EXISTS {{local:events}} {{on_cluster}} (
  event_id UUID,
  type LowCardinality(String),
  organization_id UUID,
  visitor_id Nullable(UUID),
  payload String,
  created_at DateTime64(3, 'UTC'),
  dispatched_at Nullable(DateTime64(3, 'UTC')),
  version UInt64
) ENGINE = {{sharded:ReplacingMergeTree(version)}}
ORDER BY event_id;

{{distributed:events:cityHash64(event_id)}};
