-- What the worker's passes read after a start: only what changed since their last pass.
--
-- * `first_hours_seen`: the changes (`visitor_changes`, `audience_changes` rows) a settling pass of
--   `first_hours` has settled, once they were old enough for every row of their insert to be
--   visible (a few seconds). A pass reads the changes since its last pass less an overlap (an
--   insert may finish a little after its stamp) and settles only those not seen yet: the overlap
--   costs a comparison of change rows, not a settle of every visitor in it. A seen row carries the
--   `until` of its pass: the next pass also settles the rows of a pass that never finished.
-- * `icp_rescore_passes`: how far the incremental ICP re-scoring got, in the store: a start (or a
--   process without Redis) goes on from there instead of re-scoring the last day's visitors.
CREATE TABLE IF NOT EXISTS first_hours_seen {{on_cluster}} (
  organization_id UUID,
  visitor_id UUID,
  changed_at DateTime64(3, 'UTC'),
  pass DateTime64(3, 'UTC')
) ENGINE = {{global:MergeTree}}
ORDER BY changed_at
TTL toDateTime(changed_at) + INTERVAL 1 HOUR;

CREATE TABLE IF NOT EXISTS icp_rescore_passes {{on_cluster}} (
  until DateTime64(3, 'UTC'),
  finished_at DateTime64(3, 'UTC')
) ENGINE = {{global:MergeTree}}
ORDER BY until
TTL toDateTime(finished_at) + INTERVAL 7 DAY;
