// The partner webhook dispatcher (docs/decisions.md, "Partner webhooks"): a worker sends the
// outbox's due deliveries on the retry schedule. Each partner's deliveries are sent by one process
// at a time (its lock), with at most `concurrency` in flight, and partners never wait for each
// other: a receiver that hangs for 10 s holds only its own. Nothing depends on Redis or on a
// process staying up.

import { attempt } from './attempt.js'
import { readWebhookConfig, type WebhookDeps, type WebhookKind, webhookKinds } from './config.js'
import {
  type AttemptRow,
  type DeliveryRow,
  deliveryColumns,
  fromStored,
  type StoredDelivery,
  writeAttempts,
  writeDeliveries,
} from './outbox.js'
import type { WebhookConfigRow } from './rows.js'

/** Runs `work` over `items` with at most `limit` at once. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!)
  })
  await Promise.all(lanes)
}

/** Sends a partner's due deliveries (at most `limit`), `concurrency` at a time; returns how many. */
async function deliverForPartner(
  deps: WebhookDeps,
  partnerId: string,
  limit: number,
  stop: { stopping: AbortSignal; aborted: AbortSignal },
): Promise<number> {
  const due = (
    await deps.store.query<StoredDelivery>(
      `SELECT ${deliveryColumns} FROM webhook_deliveries FINAL
       WHERE partner_id = {partnerId:UUID} AND status IN ('pending', 'retrying') AND next_attempt_at <= now64(3)
       ORDER BY next_attempt_at LIMIT {limit:UInt32}`,
      { partnerId, limit },
    )
  ).map(fromStored)
  if (due.length === 0) return 0
  const configs = new Map<WebhookKind, WebhookConfigRow | undefined>()
  for (const kind of webhookKinds) configs.set(kind, await readWebhookConfig(deps.repos, partnerId, kind))
  const deliveries: DeliveryRow[] = []
  const attempts: AttemptRow[] = []
  await eachLimited(due, deps.settings.concurrency, async (delivery) => {
    // Stopping: nothing new is sent; what is in flight may finish within the grace.
    if (stop.stopping.aborted) return
    const result = await attempt(deps, delivery, configs.get(delivery.kind), stop.aborted)
    // Cut short by a stop: not an attempt to count; the delivery stays due and goes out after the restart.
    if (stop.aborted.aborted && result.attempt.status !== 'success') return
    deliveries.push(result.delivery)
    attempts.push(result.attempt)
  })
  // The log first: a crash before the state is written sends again (at least once), and says so.
  await writeAttempts(deps.store, attempts)
  await writeDeliveries(deps.store, deliveries)
  return due.length
}

export interface WebhookDispatcher {
  /** One pass: starts the partners with due deliveries that no pass is serving yet. */
  pass(): Promise<void>
  /** Waits for every partner under way. */
  drained(): Promise<void>
  stop(): Promise<void>
}

/** The lease of a partner's lock: one process serves a partner at a time. */
const partnerLockMs = 120_000

/**
 * The dispatcher of a worker: every `intervalMs`, each partner with due deliveries is served on
 * its own (under the partner's lock, so one process at a time), in batches until none is due.
 * @example const dispatcher = startWebhookDispatcher(deps, { intervalMs: 500, log })
 */
export function startWebhookDispatcher(
  deps: WebhookDeps,
  options: {
    intervalMs?: number
    batch?: number
    /** How long a stop lets requests under way answer before it aborts them (default 3 s). */
    stopGraceMs?: number
    log: { warn(details: object, message: string): void }
  },
): WebhookDispatcher {
  const serving = new Map<string, Promise<void>>()
  // A stop sends nothing new, lets the requests under way answer for a grace period, then aborts
  // them (a receiver that hangs would hold the stop 10 s per round).
  const stopping = new AbortController()
  const aborted = new AbortController()
  const stop = { stopping: stopping.signal, aborted: aborted.signal }
  const serve = async (partnerId: string) => {
    const lock = await deps.coordination.locks.tryAcquire(`webhooks:partner:${partnerId}`, partnerLockMs)
    if (!lock) return
    try {
      // Batches of a few rounds of the partner's concurrency (4 rounds of 10 s timeouts at worst), and
      // no new batch after half the lock's lease: the lease never runs out under a busy partner,
      // whose next batches wait for the next pass (and may go to another process).
      const batch = options.batch ?? deps.settings.concurrency * 4
      const started = Date.now()
      while (
        !stopping.signal.aborted &&
        Date.now() - started < partnerLockMs / 2 &&
        (await deliverForPartner(deps, partnerId, batch, stop)) > 0
      ) {
        // Until nothing is due: a busy partner is served continuously.
      }
    } finally {
      await lock.release()
    }
  }
  const pass = async () => {
    const partners = await deps.store.query<{ partner: string }>(
      `SELECT DISTINCT toString(partner_id) AS partner FROM webhook_deliveries FINAL
       WHERE status IN ('pending', 'retrying') AND next_attempt_at <= now64(3)`,
    )
    for (const { partner } of partners) {
      if (serving.has(partner) || stopping.signal.aborted) continue
      const run = serve(partner)
        .catch((error: unknown) =>
          options.log.warn({ err: error, partnerId: partner }, 'webhook deliveries failed'),
        )
        .finally(() => serving.delete(partner))
      serving.set(partner, run)
    }
  }
  let running: Promise<void> | undefined
  const timer = setInterval(() => {
    running ??= pass()
      .catch((error: unknown) => options.log.warn({ err: error }, 'webhook dispatch pass failed'))
      .finally(() => {
        running = undefined
      })
  }, options.intervalMs ?? 500)
  timer.unref()
  return {
    pass,
    async drained() {
      await running
      await Promise.all(serving.values())
    },
    async stop() {
      stopping.abort()
      clearInterval(timer)
      const grace = setTimeout(() => aborted.abort(), options.stopGraceMs ?? 3_000)
      await running
      await Promise.all(serving.values())
      clearTimeout(grace)
    },
  }
}
