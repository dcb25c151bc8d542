-- Marks of dispatched events apart from the events (core identification/events.ts). A mark used to
-- be a new version of its event, written by INSERT ... SELECT: a read of `events` by event id, whose
-- 8,192-row granules put every stored payload in the way of a batch of random ids (35-45 MB per
-- mark at 11,000 events, more as the table grows), and a second copy of every payload for the
-- merges to rewrite. A mark is now a row of its own. Events marked the old way keep
-- `events.dispatched_at`; the dispatcher reads both.
CREATE TABLE IF NOT EXISTS {{local:event_marks}} {{on_cluster}} (
  event_id UUID,
  dispatched_at DateTime64(3, 'UTC')
) ENGINE = {{sharded:ReplacingMergeTree}}
ORDER BY event_id;

{{distributed:event_marks:cityHash64(event_id)}};
