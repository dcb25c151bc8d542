// Where a dispatcher batch spends its store time: the store work of one `deliverForPartner` call
// (packages/core/src/webhooks/dispatcher.ts) replayed without HTTP in the bench process on a copy of
// a filled store, step by step. The SQL is a copy of the dispatcher's (keep them in step); the
// writes go to the copy's own tables like the dispatcher's (the copy is thrown away).
import { randomUUID } from 'node:crypto'
import { nextVersion } from '@visitor-id/core/ids'

const deliveryColumns = `id, toString(partner_id) AS partner, toString(organization_id) AS organization, kind,
  event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at`

const sql = {
  pass: `SELECT DISTINCT toString(partner_id) AS partner FROM webhook_deliveries FINAL
       WHERE status IN ('pending', 'retrying') AND next_attempt_at <= now64(3)`,
  due: `SELECT ${deliveryColumns} FROM webhook_deliveries FINAL
       WHERE partner_id = {partnerId:UUID} AND status IN ('pending', 'retrying') AND next_attempt_at <= now64(3)
       ORDER BY next_attempt_at LIMIT {limit:UInt32}`,
  // The same rows without their bodies: how much of the due query is reading `body`.
  dueIds: `SELECT id FROM webhook_deliveries FINAL
       WHERE partner_id = {partnerId:UUID} AND status IN ('pending', 'retrying') AND next_attempt_at <= now64(3)
       ORDER BY next_attempt_at LIMIT {limit:UInt32}`,
  config: `SELECT toString(partner_id) AS partner, kind, url, secret, enabled, created_at, updated_at
       FROM webhook_configs FINAL WHERE partner_id = {partnerId:UUID} AND kind = {kind:String}`,
}

const timed = async (work) => {
  const started = performance.now()
  const value = await work()
  return { ms: performance.now() - started, value }
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor((sorted.length - 1) / 2)]
}

/**
 * Replays `batches` dispatcher batches of `batch` deliveries for the partner (due query, the two
 * configuration reads, the attempts insert, the deliveries insert), plus the pass query and the
 * due query without bodies, each timed. Returns the median ms of each step and what they add to.
 */
export async function measureStoreCosts(store, partnerId, { batch = 64, batches = 40 } = {}) {
  const steps = { pass: [], due: [], dueIds: [], configs: [], attemptsInsert: [], deliveriesInsert: [] }
  const [{ total }] = await store.query('SELECT count() AS total FROM webhook_deliveries FINAL')
  const [{ parts }] = await store.query(
    `SELECT count() AS parts FROM system.parts WHERE database = currentDatabase() AND table = 'webhook_deliveries' AND active`,
  )
  for (let i = 0; i < batches; i++) {
    steps.pass.push((await timed(() => store.query(sql.pass))).ms)
    steps.dueIds.push((await timed(() => store.query(sql.dueIds, { partnerId, limit: batch }))).ms)
    const due = await timed(() => store.query(sql.due, { partnerId, limit: batch }))
    steps.due.push(due.ms)
    steps.configs.push(
      (
        await timed(async () => {
          for (const kind of ['identification', 'billing']) await store.query(sql.config, { partnerId, kind })
        })
      ).ms,
    )
    const at = new Date().toISOString()
    const attempts = due.value.map((row) => ({
      id: `whl_${randomUUID().replaceAll('-', '').slice(0, 12)}`,
      delivery_id: row.id,
      partner_id: row.partner,
      organization_id: row.organization,
      kind: row.kind,
      event_id: row.event_id,
      event_type: row.event_type,
      attempt: 1,
      status: 'success',
      status_code: 200,
      error: '',
      attempted_at: at,
      response_time_ms: 1,
    }))
    steps.attemptsInsert.push((await timed(() => store.insert('webhook_attempts', attempts))).ms)
    const version = nextVersion()
    const deliveries = due.value.map(({ partner, organization, ...row }) => ({
      ...row,
      partner_id: partner,
      organization_id: organization,
      status: 'success',
      attempts: 1,
      updated_at: at,
      version,
    }))
    steps.deliveriesInsert.push((await timed(() => store.insert('webhook_deliveries', deliveries))).ms)
  }
  const p50 = Object.fromEntries(Object.entries(steps).map(([step, samples]) => [step, median(samples)]))
  const perBatch = p50.due + p50.configs + p50.attemptsInsert + p50.deliveriesInsert
  return {
    rows: Number(total),
    parts: Number(parts),
    batch,
    batches,
    p50,
    perBatchMs: perBatch,
    ceilingPerSecond: (batch * 1000) / perBatch,
  }
}

/**
 * Adds `rows` delivered deliveries of the partner (copies of its queued ones under new ids, a day
 * old, status success): the history a month of traffic leaves in the table (kept 30 days), which
 * the dispatcher's queries read through with FINAL. Waits for the background merges after.
 */
export async function addHistory(store, partnerId, rows, waitForMerges) {
  const [{ queued }] = await store.query(
    `SELECT count() AS queued FROM webhook_deliveries FINAL WHERE partner_id = {partnerId:UUID} AND status = 'pending'`,
    { partnerId },
  )
  const copies = Math.ceil(rows / Number(queued))
  await store.command(
    `INSERT INTO webhook_deliveries
     SELECT concat(src.id, '_h', toString(n.number)) AS id, partner_id, organization_id, kind, event_id, event_type, body,
       'success' AS status, 1 AS attempts, next_attempt_at - toIntervalDay(1) AS next_attempt_at,
       created_at - toIntervalDay(1) AS created_at, updated_at - toIntervalDay(1) AS updated_at, version
     FROM (SELECT * FROM webhook_deliveries FINAL WHERE partner_id = {partnerId:UUID} AND status = 'pending') AS src
     CROSS JOIN numbers({copies:UInt32}) AS n
     LIMIT {rows:UInt64}`,
    { partnerId, copies, rows },
  )
  await waitForMerges(store)
  const [{ parts }] = await store.query(
    `SELECT count() AS parts FROM system.parts WHERE database = currentDatabase() AND table = 'webhook_deliveries' AND active`,
  )
  return { parts: Number(parts) }
}
