// Partner webhooks (docs/decisions.md, "Partner webhooks"): each event of an organization goes to the
// partner that manages it, signed, retried on a schedule, every attempt logged.
//
// The outbox is the store: `enqueueWebhookEvent` writes a delivery row, and the dispatcher (a
// worker) sends due deliveries and writes their next state and an attempt row. Nothing depends on
// Redis or on a process staying up: a delivery written is delivered after any restart or outage,
// at least once, always with the same `X-Service-Event-Id` and the same bytes. Each partner's
// deliveries are sent by one process at a time (its lock), with at most `concurrency` in flight,
// and partners never wait for each other: a receiver that hangs for 10 s holds only its own.

import { managingPartnerId } from '../access/access.js'
import type { Config } from '../config.js'
import type { Coordination } from '../coordination/ports.js'
import { appError } from '../errors.js'
import { type ConsumedEvent, storedEventOf } from '../events/events.js'
import { nextVersion, randomToken } from '../ids.js'
import { secretBox } from '../secret-box/secret-box.js'
import type { Store } from '../store/client.js'
import type { Repositories, WebhookConfigRow } from '../store/entities.js'
import { checkWebhookUrl, sendWebhook, type WebhookResponse } from './http-sender.js'
import { webhookHeaders } from './signature.js'

export const webhookKinds = ['identification', 'billing'] as const
export type WebhookKind = (typeof webhookKinds)[number]
export type DeliveryStatus = 'pending' | 'retrying' | 'success' | 'failed'

export type { WebhookConfigRow }

export interface DeliveryRow {
  id: string
  partner_id: string
  organization_id: string
  kind: WebhookKind
  event_id: string
  event_type: string
  body: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: string
  created_at: string
  updated_at: string
}

export interface AttemptRow {
  id: string
  delivery_id: string
  partner_id: string
  organization_id: string | null
  kind: WebhookKind
  event_id: string
  event_type: string
  attempt: number
  status: 'success' | 'retrying' | 'failed'
  status_code: number | null
  error: string
  attempted_at: string
  response_time_ms: number
}

export interface WebhookDeps {
  store: Store
  repos: Repositories
  coordination: Coordination
  settings: Config['webhooks']
}

const now = () => new Date().toISOString()
/** The partner's webhook of this kind, as stored (none: undefined); from memory (the read model). */
export async function readWebhookConfig(
  repos: Pick<Repositories, 'webhookConfigs'>,
  partnerId: string,
  kind: WebhookKind,
): Promise<WebhookConfigRow | undefined> {
  const row = await repos.webhookConfigs.get({ partner_id: partnerId, kind })
  return row && { ...row, enabled: Boolean(row.enabled) }
}

/** Where a sealed secret belongs: a secret copied to another partner's row does not open there. */
const secretContext = (partnerId: string, kind: WebhookKind) => `webhook:${partnerId}:${kind}`

/**
 * The secret to sign with. With SECRET_KEY set, secrets are stored sealed (`v1.` + AES-256-GCM);
 * a secret saved before SECRET_KEY was set is still plain, and is sealed at the next change.
 */
function signingSecret(settings: WebhookDeps['settings'], row: WebhookConfigRow): string {
  if (!row.secret.startsWith('v1.')) return row.secret
  if (!settings.secretKey) throw new Error('the webhook secret is sealed but SECRET_KEY is not set')
  return secretBox(settings.secretKey).open(row.secret, secretContext(row.partner_id, row.kind))
}

/** What the API shows of a webhook: never the secret. */
export function presentWebhookConfig(row: WebhookConfigRow | undefined) {
  return { url: row?.url ?? '', enabled: row?.enabled ?? false, hasSecret: Boolean(row?.secret) }
}

export interface WebhookConfigChange {
  url?: string | undefined
  secret?: string | undefined
  enabled?: boolean | undefined
}

/**
 * Applies the given fields (the others keep their value). A URL is checked on save (http(s), no
 * credentials, and no private, loopback or link-local address unless WEBHOOK_ALLOW_PRIVATE): a 400
 * naming `url` with the reason. An empty URL removes it (and the webhook is then disabled).
 */
export async function updateWebhookConfig(
  deps: WebhookDeps,
  partnerId: string,
  kind: WebhookKind,
  change: WebhookConfigChange,
): Promise<WebhookConfigRow> {
  if (change.url) {
    const problem = await checkWebhookUrl(change.url, { allowPrivate: deps.settings.allowPrivate })
    if (problem) {
      throw appError('invalid_request', `url: ${problem}`, { issues: [{ path: 'url', message: problem }] })
    }
  }
  const current = await readWebhookConfig(deps.repos, partnerId, kind)
  const url = change.url ?? current?.url ?? ''
  const plain = change.secret ?? (current ? signingSecret(deps.settings, current) : '')
  const key = deps.settings.secretKey
  const row: WebhookConfigRow = {
    partner_id: partnerId,
    kind,
    url,
    secret: key && plain ? secretBox(key).seal(plain, secretContext(partnerId, kind)) : plain,
    enabled: url === '' ? false : (change.enabled ?? current?.enabled ?? true),
    created_at: current?.created_at ?? now(),
    updated_at: now(),
  }
  await deps.repos.webhookConfigs.save(row)
  return row
}

/** Events of the service's own (flow triggers) that partners are not sent. */
const internalEvents = new Set(['list.refreshed', 'icp.matched'])

/** The kind of webhook an event type goes to; undefined for internal events. */
export function webhookKindOf(eventType: string): WebhookKind | undefined {
  if (internalEvents.has(eventType)) return undefined
  return eventType.startsWith('visitor.') ? 'identification' : 'billing'
}

/**
 * Queues an event for the partner of its organization, if that partner has an enabled webhook of
 * the event's kind: the one function every producer calls (identification events through the
 * event queue, billing events too). Writing the same event twice queues it once.
 * Returns the delivery id, or undefined when nobody is to be told.
 * @example await enqueueWebhookEvent(deps, { organizationId, eventId, eventType: 'subscription.updated', payload })
 */
export async function enqueueWebhookEvent(
  deps: Pick<WebhookDeps, 'store' | 'repos'>,
  event: { organizationId: string; eventId: string; eventType: string; payload: string | object },
): Promise<string | undefined> {
  const kind = webhookKindOf(event.eventType)
  if (!kind) return undefined
  const partnerId = await managingPartnerId(deps.repos, event.organizationId)
  if (!partnerId) return undefined
  const config = await readWebhookConfig(deps.repos, partnerId, kind)
  if (!config?.enabled || !config.url) return undefined
  const id = `whd_${event.eventId}_${kind}`
  const [existing] = await deps.store.query<{ n: number }>(
    'SELECT count() AS n FROM webhook_deliveries WHERE partner_id = {partnerId:UUID} AND id = {id:String}',
    { partnerId, id },
  )
  if (Number(existing?.n ?? 0) > 0) return id
  await writeDeliveries(deps.store, [
    {
      id,
      partner_id: partnerId,
      organization_id: event.organizationId,
      kind,
      event_id: event.eventId,
      event_type: event.eventType,
      body: typeof event.payload === 'string' ? event.payload : JSON.stringify(event.payload),
      status: 'pending',
      attempts: 0,
      next_attempt_at: now(),
      created_at: now(),
      updated_at: now(),
    },
  ])
  return id
}

/**
 * The event queue's consumer: the stored event (its payload as stored, byte for byte) queued for
 * the partner of its organization.
 */
export async function enqueueStoredEvent(
  deps: Pick<WebhookDeps, 'store' | 'repos'>,
  job: ConsumedEvent,
): Promise<string | undefined> {
  const payload = (await storedEventOf(deps.store, job))?.payload
  if (payload === undefined) return undefined
  return enqueueWebhookEvent(deps, {
    organizationId: job.organizationId,
    eventId: job.eventId,
    eventType: job.type,
    payload,
  })
}

async function writeDeliveries(store: Store, rows: readonly DeliveryRow[]): Promise<void> {
  if (rows.length > 0)
    await store.insert(
      'webhook_deliveries',
      rows.map((row) => ({ ...row, version: nextVersion() })),
    )
}

async function writeAttempts(store: Store, rows: readonly AttemptRow[]): Promise<void> {
  if (rows.length > 0) await store.insert('webhook_attempts', rows)
}

/** Why an attempt failed, for the log and the test reply. */
function failureOf(response: WebhookResponse): string {
  return response.error ?? (response.statusCode ? `HTTP ${response.statusCode}` : 'no answer')
}

/** Sends one delivery once: the attempt row and the delivery's next state (not written yet). */
async function attempt(
  deps: WebhookDeps,
  delivery: DeliveryRow,
  config: WebhookConfigRow | undefined,
  signal?: AbortSignal,
): Promise<{ delivery: DeliveryRow; attempt: AttemptRow }> {
  const tries = delivery.attempts + 1
  const attemptedAt = now()
  let response: WebhookResponse
  let secret: string | undefined
  let unreadable: string | undefined
  try {
    secret = config ? signingSecret(deps.settings, config) : undefined
  } catch (error) {
    unreadable = (error as Error).message
  }
  if (!config?.enabled || !config.url) {
    response = { ok: false, statusCode: null, responseTimeMs: 0, error: 'the webhook is disabled' }
  } else if (unreadable !== undefined || secret === undefined) {
    // Retried on the schedule: setting the same SECRET_KEY as the process that sealed it fixes it.
    response = { ok: false, statusCode: null, responseTimeMs: 0, error: unreadable ?? 'no secret' }
  } else {
    const body = Buffer.from(delivery.body)
    response = await sendWebhook({
      url: config.url,
      body,
      headers: webhookHeaders({
        body,
        secret,
        eventId: delivery.event_id,
        eventType: delivery.event_type,
      }),
      allowPrivate: deps.settings.allowPrivate,
      signal,
    })
  }
  const schedule = deps.settings.retryScheduleMs
  const disabled = !config?.enabled || !config.url
  const status: AttemptRow['status'] = response.ok
    ? 'success'
    : !disabled && tries <= schedule.length
      ? 'retrying'
      : 'failed'
  return {
    delivery: {
      ...delivery,
      status: status === 'success' ? 'success' : status === 'retrying' ? 'retrying' : 'failed',
      attempts: tries,
      next_attempt_at:
        status === 'retrying'
          ? new Date(Date.now() + schedule[tries - 1]!).toISOString()
          : delivery.next_attempt_at,
      updated_at: now(),
    },
    attempt: {
      id: randomToken('whl_', 12),
      delivery_id: delivery.id,
      partner_id: delivery.partner_id,
      organization_id: delivery.organization_id,
      kind: delivery.kind,
      event_id: delivery.event_id,
      event_type: delivery.event_type,
      attempt: tries,
      status,
      status_code: response.statusCode,
      error: response.ok ? '' : failureOf(response),
      attempted_at: attemptedAt,
      response_time_ms: Math.max(0, Math.round(response.responseTimeMs)),
    },
  }
}

/** Runs `work` over `items` with at most `limit` at once. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!)
  })
  await Promise.all(lanes)
}

const deliveryColumns = `id, toString(partner_id) AS partner, toString(organization_id) AS organization, kind,
  event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at`

type StoredDelivery = Omit<DeliveryRow, 'partner_id' | 'organization_id'> & {
  partner: string
  organization: string
}
const fromStored = ({ partner, organization, ...row }: StoredDelivery): DeliveryRow => ({
  ...row,
  partner_id: partner,
  organization_id: organization,
  attempts: Number(row.attempts),
})

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

export interface WebhookLogQuery {
  page: number
  pageSize: number
  type?: WebhookKind | undefined
  status?: AttemptRow['status'] | undefined
  organizationId?: string | undefined
}

const attemptColumns = `id, delivery_id, toString(partner_id) AS partner, toString(organization_id) AS organization,
  kind, event_id, event_type, attempt, status, status_code, error, attempted_at, response_time_ms`

type StoredAttempt = Omit<AttemptRow, 'partner_id' | 'organization_id'> & {
  partner: string
  organization: string | null
}
const attemptOf = ({ partner, organization, ...row }: StoredAttempt): AttemptRow => ({
  ...row,
  partner_id: partner,
  organization_id: organization,
  attempt: Number(row.attempt),
  status_code: row.status_code === null ? null : Number(row.status_code),
  response_time_ms: Number(row.response_time_ms),
})

/** The partner's delivery log, newest first, one page and the total. */
export async function webhookLogs(
  store: Store,
  partnerId: string,
  query: WebhookLogQuery,
): Promise<{ rows: AttemptRow[]; total: number }> {
  const conditions = ['partner_id = {partnerId:UUID}']
  if (query.type) conditions.push('kind = {type:String}')
  if (query.status) conditions.push('status = {status:String}')
  if (query.organizationId) conditions.push('toString(organization_id) = {organizationId:String}')
  const params = {
    partnerId,
    type: query.type,
    status: query.status,
    organizationId: query.organizationId?.toLowerCase(),
    limit: query.pageSize,
    offset: (query.page - 1) * query.pageSize,
  }
  const rows = await store.query<StoredAttempt & { total: number }>(
    `SELECT ${attemptColumns}, count() OVER () AS total FROM webhook_attempts
     WHERE ${conditions.join(' AND ')}
     ORDER BY attempted_at DESC, id DESC LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    params,
  )
  const total =
    rows.length > 0
      ? Number(rows[0]!.total)
      : Number(
          (
            await store.query<{ n: number }>(
              `SELECT count() AS n FROM webhook_attempts WHERE ${conditions.join(' AND ')}`,
              params,
            )
          )[0]?.n ?? 0,
        )
  return { rows: rows.map(attemptOf), total }
}

/**
 * Sends the delivery of a log entry again, now, as a new delivery of the same event (same body and
 * event id): its own attempts and, if it fails, its own retries. Another partner's entry, or a
 * test delivery (nothing to send again): 404.
 */
export async function redeliver(
  deps: WebhookDeps,
  partnerId: string,
  attemptId: string,
): Promise<AttemptRow> {
  const [logged] = await deps.store.query<{ delivery_id: string }>(
    'SELECT delivery_id FROM webhook_attempts WHERE partner_id = {partnerId:UUID} AND id = {id:String} LIMIT 1',
    { partnerId, id: attemptId },
  )
  const [stored] = logged
    ? await deps.store.query<StoredDelivery>(
        `SELECT ${deliveryColumns} FROM webhook_deliveries FINAL
         WHERE partner_id = {partnerId:UUID} AND id = {id:String}`,
        { partnerId, id: logged.delivery_id },
      )
    : []
  if (!stored) throw appError('resource_not_found', 'Log entry not found')
  const original = fromStored(stored)
  const copy: DeliveryRow = {
    ...original,
    id: `${original.id}_r${Date.now().toString(36)}`,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now(),
    created_at: now(),
    updated_at: now(),
  }
  const result = await attempt(deps, copy, await readWebhookConfig(deps.repos, partnerId, copy.kind))
  await writeAttempts(deps.store, [result.attempt])
  await writeDeliveries(deps.store, [result.delivery])
  return result.attempt
}

/**
 * `POST /partner/webhooks/test`: a signed sample event of the kind, sent now (even while the
 * webhook is disabled: that is what a test is for) and logged; the reply says what the receiver
 * answered or why it could not be reached.
 */
export async function testWebhook(
  deps: WebhookDeps,
  partnerId: string,
  kind: WebhookKind,
  sample: object,
): Promise<{ success: boolean; message: string }> {
  const config = await readWebhookConfig(deps.repos, partnerId, kind)
  if (!config?.url) return { success: false, message: `No ${kind} webhook URL is configured` }
  const eventId = randomToken('test_', 12)
  const eventType = kind === 'identification' ? 'visitor.identified' : 'invoice.paid'
  const body = Buffer.from(JSON.stringify(sample))
  const response = await sendWebhook({
    url: config.url,
    body,
    headers: webhookHeaders({ body, secret: signingSecret(deps.settings, config), eventId, eventType }),
    allowPrivate: deps.settings.allowPrivate,
  })
  await writeAttempts(deps.store, [
    {
      id: randomToken('whl_', 12),
      delivery_id: '',
      partner_id: partnerId,
      organization_id: null,
      kind,
      event_id: eventId,
      event_type: eventType,
      attempt: 1,
      status: response.ok ? 'success' : 'failed',
      status_code: response.statusCode,
      error: response.ok ? '' : failureOf(response),
      attempted_at: now(),
      response_time_ms: Math.round(response.responseTimeMs),
    },
  ])
  return response.ok
    ? {
        success: true,
        message: `The receiver answered ${response.statusCode} in ${Math.round(response.responseTimeMs)} ms`,
      }
    : { success: false, message: `The delivery failed: ${failureOf(response)}` }
}
