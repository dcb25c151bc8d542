-- Identification credits (issue 12): the ledger (packages/core/src/credits/ledger.ts).
--
-- One row per entry: grants (positive), charges (negative) and adjustments (either sign). A balance
-- is the sum of the live entries' amounts, read with FINAL, never a stored number.
--
-- `entry_id` is an idempotency key within an organization: writing the same entry again makes a
-- new version of the same row, so it counts once (the latest version wins). Deterministic ids make
-- writes safe to repeat: `initial` (the grant a new organization opens with), `identify:<visitorId>`
-- (the one charge of a visitor identified as a person, even when several processes charge it at
-- once). Phone-search reservations fit the same row: a `reservation` entry keyed by the search,
-- later replaced (same entry_id, higher version) by its charge or by a zero-amount release; readers
-- of the balance sum the kinds grant, charge and adjustment only.
--
-- A full copy on every node of a cluster (like the entities), so FINAL sees every version of an
-- entry wherever it was written.

CREATE TABLE IF NOT EXISTS credit_ledger {{on_cluster}} (
  organization_id UUID,
  entry_id String,
  kind LowCardinality(String),
  amount Int64,
  reason String DEFAULT '',
  created_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = {{global:ReplacingMergeTree(version)}}
ORDER BY (organization_id, entry_id);
