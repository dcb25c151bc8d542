-- Contact cards (core identification/contacts.ts, findContactsByKeys): every field identification
-- reads of a contact in one column, a tab-separated row (the engine's TSV escaping) in the order of
-- `cardFields` there. Identification finds a few hundred contacts scattered over millions; read
-- column by column, each contact cost a compressed block per column (35 of them): 230 contacts in
-- 100-130 ms alone, 250 ms under the identify mix; by card 60-75 ms (bench/README.md, "The contacts
-- lookup by card"). TSV rather than JSON: a JSON object per row (toJSONString of a map) made a
-- million-contact import 2.5 times slower (5.7 s of engine time per million rows against 0.7 s).
-- The engine computes the column on insert (imports need not know it); parts written before this
-- migration compute it on read until the mutation below has rewritten them.
ALTER TABLE contacts {{on_cluster}}
  ADD COLUMN IF NOT EXISTS card String MATERIALIZED formatRowNoNewline('TSV',
    id, email, email_sha256, personal_email, personal_email_sha256, first_name,
    last_name, job_title, seniority, department, phone, linkedin_url,
    facebook_url, twitter_url, photo_url, location, address, address_2,
    city, state, postal_code, country, gender, age_range,
    income_range, net_worth, homeowner, married, children, company_id,
    company_domain,
    toString(created_at), toString(updated_at));

ALTER TABLE contacts {{on_cluster}} MATERIALIZE COLUMN card;
