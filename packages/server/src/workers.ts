// The worker role: jobs, periodic passes and the stored events' consumers. Any number of workers
// may run them (locks keep one pass at a time across processes). Everything started here is added
// to the process's stop list as it starts, so a start that fails later stops it too.
import { startFirstHoursSettling } from '@visitor-id/core/analytics'
import { billingSweep } from '@visitor-id/core/billing'
import type { Config } from '@visitor-id/core/config'
import { type Coordination, startPeriodicTask } from '@visitor-id/core/coordination'
import { createDnsResolver, recheckVerifiedDomains } from '@visitor-id/core/custom-domain'
import {
  billingEmail,
  creditEmail,
  emailSecret,
  firstVisitorEmail,
  integrationReconnectEmails,
  type LifecycleEmailJob,
  lifecycleEmailJobName,
  sendLifecycleEmail,
} from '@visitor-id/core/email'
import { startEventProcessing } from '@visitor-id/core/events'
import { recalculationJobName, runRecalculation, startIncrementalScoring } from '@visitor-id/core/icp'
import {
  type AudienceSyncJob,
  audienceSyncJobName,
  type RequestStatusJob,
  requestStatusJobName,
  runAudienceSyncJob,
  runFlowsForEvent,
  runRequestStatusJob,
} from '@visitor-id/core/integrations'
import { startListAutoRefresh } from '@visitor-id/core/lists'
import {
  autoEnrichPhone,
  type PhoneSearchJob,
  phoneSearchJobName,
  runPhoneSearchJob,
  startPhoneSearchSweep,
} from '@visitor-id/core/phone-search'
import { startRetention } from '@visitor-id/core/privacy'
import type { Repositories } from '@visitor-id/core/repositories'
import { backgroundStore, type Store } from '@visitor-id/core/store'
import { enqueueStoredEvent, startWebhookDispatcher } from '@visitor-id/core/webhooks'
import type { FastifyBaseLogger } from 'fastify'
import { createMailer, type ProcessServices, publicUrlOf } from './adapters.js'
import type { StopList } from './stop-list.js'

export interface WorkerParts {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
  services: ProcessServices
  log: FastifyBaseLogger
}

/** The scoring, statistics and list passes: each reads what new page views changed. */
function startReadModelPasses(parts: WorkerParts, started: StopList): void {
  const { config, store, repos, coordination, log } = parts
  const { locks } = coordination
  const deps = { store, repos, coordination, log }
  // Jobs and the ICP re-scoring pass (locks keep one run per config).
  coordination.jobs.process(recalculationJobName, (job) =>
    runRecalculation(deps, job.data as Parameters<typeof runRecalculation>[1]),
  )
  const scoring = startIncrementalScoring(deps, config.icpRescoreIntervalMs)
  started.add('workers', () => scoring.stop())
  // The statistics' distinct counts read first_hours: settled for the visitors with new page views.
  const firstHours = startFirstHoursSettling({ store, locks, log }, config.analyticsSettleIntervalMs)
  started.add('workers', () => firstHours.stop())
  const listRefresh = startListAutoRefresh(
    { store, repos, locks },
    { refreshAfterMs: config.listAutoRefreshMs, log },
  )
  started.add('workers', () => listRefresh.stop())
}

/**
 * The daily custom-domain re-check, the billing sweep and the integration reconnect emails: passes
 * on a timer, one process at a time.
 */
function startPeriodicPasses(parts: WorkerParts, started: StopList): void {
  const { config, store, repos, coordination, services, log } = parts
  const { locks } = coordination
  // Verified custom domains are checked again once a day; a record that disappeared fails.
  const resolver = createDnsResolver(config.ingest.dnsServers)
  const domainRecheck = startPeriodicTask({
    locks,
    lockName: 'domains:recheck',
    lockTtlMs: 30 * 60_000,
    intervalMs: 60 * 60_000,
    pass: async () => {
      await recheckVerifiedDomains(store, resolver, { minAgeMs: 24 * 60 * 60_000 })
    },
    onError: (error) => log.warn({ err: error }, 'custom domain re-check failed'),
  })
  started.add('workers', () => domainRecheck.stop())
  // Each organization's retention: raw data and full IP addresses past their limits.
  const retention = startRetention(
    { store: backgroundStore(store), repos, locks, defaults: config.retention, log },
    config.retention.intervalMs,
  )
  started.add('workers', () => retention.stop())
  // Billing: the local provider's renewals and the end of B2B time after leaving the plan.
  const billingTask = startPeriodicTask({
    locks,
    lockName: 'billing:sweep',
    lockTtlMs: 10 * 60_000,
    intervalMs: 60_000,
    pass: () => billingSweep(services.billing),
    onError: (error) => log.warn({ err: error }, 'billing sweep failed'),
  })
  started.add('workers', () => billingTask.stop())
  // Grants without a refresh token (Meta's) ending within 7 days: their members are mailed, once
  // per grant (recorded in the store), by an hourly pass.
  const reconnectDeps = {
    store,
    repos,
    coordination,
    settings: config.integrations,
    publicUrl: publicUrlOf(config),
  }
  const reconnectTask = startPeriodicTask({
    locks,
    lockName: 'integrations:reconnect-emails',
    lockTtlMs: 10 * 60_000,
    intervalMs: 60 * 60_000,
    pass: async () => {
      await integrationReconnectEmails(reconnectDeps)
    },
    onError: (error) => log.warn({ err: error }, 'integration reconnect emails failed'),
  })
  started.add('workers', () => reconnectTask.stop())
}

/**
 * Starts every job handler and periodic pass of the worker role.
 * @example startWorkers({ config, store, repos, coordination, services, log: app.log }, started)
 */
export function startWorkers(processParts: WorkerParts, started: StopList): void {
  // Every pass and job here is background work: its queries run on the store's background sessions
  // at a lower engine priority, so requests served by the same process never wait behind them.
  const parts = { ...processParts, store: backgroundStore(processParts.store) }
  const { config, store, repos, coordination, services, log } = parts
  const deps = { store, repos, coordination, log }
  startReadModelPasses(parts, started)
  // Phone searches: the provider is asked by jobs; a sweep expires searches past
  // PHONE_SEARCH_TIMEOUT, and its first pass asks again about the searches a stopped process
  // left ongoing (an in-memory queue loses their jobs).
  const { phone, integrations: flows } = services
  coordination.jobs.process<PhoneSearchJob>(phoneSearchJobName, (job) => runPhoneSearchJob(phone, job.data), {
    concurrency: 4,
  })
  const phoneSweep = startPhoneSearchSweep(phone, log)
  started.add('workers', () => phoneSweep.stop())
  // Audience syncs the platform paused (or that waited for another sync of their audience), and the
  // read-back of how the platform processed a sync's requests.
  coordination.jobs.process<AudienceSyncJob>(audienceSyncJobName, async (job) => {
    await runAudienceSyncJob(flows, job.data)
  })
  coordination.jobs.process<RequestStatusJob>(requestStatusJobName, (job) =>
    runRequestStatusJob(flows, job.data),
  )
  // Partner webhooks: every event is queued for the partner of its organization (an outbox in
  // the store), and the dispatcher delivers it.
  const webhookDeps = { store, repos, coordination, settings: config.webhooks }
  const webhooks = startWebhookDispatcher(webhookDeps, { log })
  started.add('workers', () => webhooks.stop())
  startPeriodicPasses(parts, started)
  // Lifecycle emails: one job per recipient, through SMTP_URL or to DATA_DIR/mail. The mailer
  // closes after the coordination, once the email jobs under way have finished.
  const mailer = createMailer(config)
  started.add('mail', () => mailer.close())
  const emailDeps = {
    store,
    repos,
    coordination,
    mailer,
    secret: emailSecret(config.email.secret, config.dataDir),
    publicUrl: publicUrlOf(config),
  }
  coordination.jobs.process<LifecycleEmailJob>(lifecycleEmailJobName, async (job) => {
    await sendLifecycleEmail(emailDeps, job.data)
  })
  // Stored events run through their consumers (logged by id and type only: no personal data);
  // each is marked dispatched once they all ran, so a restart runs the unmarked ones again.
  const events = startEventProcessing(deps, async (event) => {
    log.info({ eventId: event.eventId, type: event.type }, 'event')
    await enqueueStoredEvent(webhookDeps, event)
    await firstVisitorEmail(emailDeps, event)
    await creditEmail(emailDeps, event)
    await billingEmail(emailDeps, event)
    // Integration flows triggered by the event (list refreshed, visitor identified, ICP matched).
    await runFlowsForEvent(flows, event)
    // Auto phone enrichment of a newly identified visitor (the organization's setting decides).
    await autoEnrichPhone(phone, event)
  })
  // Added last, so it stops first of the workers: no new work is queued while the others stop.
  started.add('workers', () => events.stop())
}
