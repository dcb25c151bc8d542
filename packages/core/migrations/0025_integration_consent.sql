-- The consent an organization's audiences are sent with (Google's `adUserData` and
-- `adPersonalization`), set with its ads account (`POST /integrations/account/select`): JSON, ''
-- for the server's default (SEARCH_ADS_CONSENT_*).
ALTER TABLE integrations {{on_cluster}} ADD COLUMN IF NOT EXISTS consent String DEFAULT '' AFTER selected_account_id;
