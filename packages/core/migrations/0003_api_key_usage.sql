-- When each API key was last used. Kept apart from api_keys on purpose: a usage write that copied
-- an api_keys row could land after a concurrent revocation and, with a higher version, bring the
-- key back to life. Here every write is just (key, time); the latest time wins.
CREATE TABLE IF NOT EXISTS api_key_usage {{on_cluster}} (
  key_id String,
  last_used_at DateTime64(3, 'UTC')
) ENGINE = {{global:ReplacingMergeTree(last_used_at)}}
ORDER BY key_id;
