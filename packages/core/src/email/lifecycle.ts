// Lifecycle emails (docs/decisions.md, "Email"): a trigger (an event of the organization) becomes one job
// per recipient (the organization's owner and members), and each job sends one message, checking
// the organization's effective preference when it runs. An SMTP outage fails the job, which the
// queue retries with backoff: mail waits, nothing else does, and a recipient already mailed is
// never mailed again by another recipient's retry.

import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { managingPartnerId } from '../access/access.js'
import { createBoundedCache } from '../bounded-cache.js'
import type { Coordination } from '../coordination/ports.js'
import { type ConsumedEvent, storedEventOf } from '../events/events.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import type { LifecycleEmailData } from './mail-templates.js'
import { isPermanentMailError, lifecycleMessage, type Mailer } from './mailer.js'
import { type EmailPreferenceKey, organizationEmailPreferences } from './preferences.js'

/** The job that sends one lifecycle email to one recipient. */
export const lifecycleEmailJobName = 'lifecycle-email'

export interface LifecycleEmailJob<K extends EmailPreferenceKey = EmailPreferenceKey> {
  key: K
  organizationId: string
  to: string
  data: Omit<LifecycleEmailData<K>, 'unsubscribeUrl' | 'organizationName'>
}

export interface LifecycleEmailDeps {
  store: Store
  repos: Repositories
  coordination: Coordination
  mailer: Mailer
  /** Signs the unsubscribe links. */
  secret: string
  /** The service's public URL (the unsubscribe links point there). */
  publicUrl: string
}

/**
 * The secret that signs unsubscribe links: EMAIL_SECRET when set (several processes must share
 * it), else one made at first use and kept in `DATA_DIR/email-secret` (mode 0600).
 */
export function emailSecret(configured: string | undefined, dataDir: string): string {
  if (configured) return configured
  const file = path.join(dataDir, 'email-secret')
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' })
  }
  return readFileSync(file, 'utf8').trim()
}

/** The organization's owner and members, by email, each once. */
async function recipients(repos: Repositories, organizationId: string): Promise<string[]> {
  const memberships = await repos.memberships.find({ organization_id: organizationId })
  const users = await Promise.all(memberships.map((m) => repos.users.get({ id: m.user_id })))
  return [
    ...new Set(users.map((user) => user?.email.trim().toLowerCase()).filter((email) => email)),
  ] as string[]
}

/**
 * Queues one email per recipient of the organization, if its effective preference for the key is
 * on (checked again when each job runs). `dedupe` makes the jobs' ids, so a trigger handled twice
 * while its jobs wait queues them once. Returns how many were queued.
 */
export async function queueLifecycleEmail<K extends EmailPreferenceKey>(
  deps: Pick<LifecycleEmailDeps, 'store' | 'repos' | 'coordination'>,
  input: { key: K; organizationId: string; dedupe: string; data: LifecycleEmailJob<K>['data'] },
): Promise<number> {
  const partnerId = await managingPartnerId(deps.repos, input.organizationId)
  const preferences = await organizationEmailPreferences(deps.store, input.organizationId, partnerId)
  if (!preferences[input.key].enabled) return 0
  const to = await recipients(deps.repos, input.organizationId)
  for (const email of to) {
    const job: LifecycleEmailJob<K> = {
      key: input.key,
      organizationId: input.organizationId,
      to: email,
      data: input.data,
    }
    await deps.coordination.jobs.add(lifecycleEmailJobName, job, {
      jobId: `email:${input.dedupe}:${email}`,
      attempts: 10,
      backoff: { type: 'exponential', delayMs: 30_000 },
    })
  }
  return to.length
}

/** The job: one message to one recipient, unless the preference was turned off meanwhile. */
export async function sendLifecycleEmail(deps: LifecycleEmailDeps, job: LifecycleEmailJob): Promise<boolean> {
  const organization = await deps.repos.organizations.get({ id: job.organizationId })
  if (!organization) return false
  const partnerId = await managingPartnerId(deps.repos, job.organizationId)
  const preferences = await organizationEmailPreferences(deps.store, job.organizationId, partnerId)
  if (!preferences[job.key].enabled) return false
  const message = lifecycleMessage({
    key: job.key,
    to: job.to,
    organizationId: job.organizationId,
    secret: deps.secret,
    publicUrl: deps.publicUrl,
    data: { ...job.data, organizationName: organization.name } as never,
  })
  try {
    await deps.mailer.send(message)
    return true
  } catch (error) {
    // A refused address or message will be refused again: no retry. Anything else is retried.
    if (isPermanentMailError(error)) return false
    throw error
  }
}

/**
 * Each organization's earliest `visitor.identified` event, once this process has read it, so the
 * consumer does not read the events table for every identification. An event stored later with an
 * earlier time (a hit held back by its browser) is not seen as first here; the email is still sent
 * once, by the event that was first when it was consumed, since the send is deduplicated.
 */
const firstIdentified = createBoundedCache<string>(10_000)

async function firstIdentifiedEvent(store: Store, organizationId: string): Promise<string | undefined> {
  const known = firstIdentified.get(organizationId)
  if (known !== undefined) return known
  const [first] = await store.query<{ event_id: string }>(
    `SELECT toString(argMin(event_id, created_at)) AS event_id FROM events
     WHERE organization_id = {organizationId:UUID} AND type = 'visitor.identified' HAVING count() > 0`,
    { organizationId },
  )
  return first?.event_id ? firstIdentified.set(organizationId, first.event_id) : undefined
}

/**
 * `first_visitor_identified` for the organization of a `visitor.identified` event, when that event
 * is the organization's first (the earliest of its kind): the trigger of the event consumer.
 */
export async function firstVisitorEmail(
  deps: Pick<LifecycleEmailDeps, 'store' | 'repos' | 'coordination'>,
  event: { eventId: string; type: string; organizationId: string; visitorId?: string | null | undefined },
): Promise<number> {
  if (event.type !== 'visitor.identified' || !event.visitorId) return 0
  if ((await firstIdentifiedEvent(deps.store, event.organizationId)) !== event.eventId) return 0
  const visitor = await deps.repos.visitors.get({
    organization_id: event.organizationId,
    id: event.visitorId,
  })
  return queueLifecycleEmail(deps, {
    key: 'first_visitor_identified',
    organizationId: event.organizationId,
    dedupe: `first_visitor_identified:${event.organizationId}`,
    data: {
      visitor: {
        name: [visitor?.first_name, visitor?.last_name].filter(Boolean).join(' ') || undefined,
        email: visitor?.email || undefined,
        title: visitor?.job_title || undefined,
      },
    },
  })
}

/** `credits_low` / `credits_exhausted` for a `credits.low` / `credits.exhausted` event, with its balance. */
export async function creditEmail(
  deps: Pick<LifecycleEmailDeps, 'store' | 'repos' | 'coordination'>,
  event: ConsumedEvent,
): Promise<number> {
  const key =
    event.type === 'credits.low'
      ? 'credits_low'
      : event.type === 'credits.exhausted'
        ? 'credits_exhausted'
        : undefined
  if (!key) return 0
  const payload = (await storedEventOf(deps.store, event))?.payload
  const balance = Number((JSON.parse(payload ?? '{}') as { balance?: number }).balance ?? 0)
  return queueLifecycleEmail(deps, {
    key,
    organizationId: event.organizationId,
    dedupe: event.eventId,
    data: { balance },
  })
}

/** The part of a billing event's payload (core billing/billing-events.ts) the emails read. */
interface BillingEmailPayload {
  subscription?: { plan_name?: string; current_period_end?: string; cancel_at_period_end?: boolean }
  invoice?: {
    id: string
    amount: number
    currency: string
    reason: string
    period_end?: string | null
    url?: string | null
  }
}

/**
 * The billing emails of billing events: `subscription_activated`, `subscription_canceled`,
 * `payment_failed`, and `renewal_receipt` for a renewal's paid invoice (not the first one: the
 * activation email covers it).
 */
export async function billingEmail(
  deps: Pick<LifecycleEmailDeps, 'store' | 'repos' | 'coordination'>,
  event: ConsumedEvent,
): Promise<number> {
  if (
    !['subscription.activated', 'subscription.canceled', 'payment.failed', 'invoice.paid'].includes(
      event.type,
    )
  ) {
    return 0
  }
  const payload = JSON.parse((await storedEventOf(deps.store, event))?.payload ?? '{}') as BillingEmailPayload
  const plan = payload.subscription?.plan_name || 'subscription'
  const invoice = payload.invoice
  const amount = invoice ? { minor: invoice.amount, currency: invoice.currency.toUpperCase() } : undefined
  const common = { organizationId: event.organizationId, dedupe: event.eventId }
  switch (event.type) {
    case 'subscription.activated':
      return queueLifecycleEmail(deps, { ...common, key: 'subscription_activated', data: { plan } })
    case 'subscription.canceled':
      return queueLifecycleEmail(deps, {
        ...common,
        key: 'subscription_canceled',
        data: { plan, endsAt: payload.subscription?.current_period_end },
      })
    case 'payment.failed':
      return queueLifecycleEmail(deps, { ...common, key: 'payment_failed', data: { plan, amount } })
    default:
      if (!invoice || !amount || invoice.reason !== 'subscription_cycle') return 0
      return queueLifecycleEmail(deps, {
        ...common,
        key: 'renewal_receipt',
        data: {
          plan,
          amount,
          periodEnd: invoice.period_end ?? undefined,
          invoiceUrl: invoice.url ?? undefined,
        },
      })
  }
}
