// The stores of the webhook benchmark: partners, organizations, webhook configurations and queued
// deliveries, written by the bench process through the service's own functions (the embedded store
// is one process's at a time, so this runs before the server starts on the directory).
import { randomUUID } from 'node:crypto'
import { createMemoryCoordination } from '@visitor-id/core/coordination'
import { createOrganization, createPartner, createUser } from '@visitor-id/core/organizations'
import { createRepositories } from '@visitor-id/core/repositories'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { enqueueWebhookEvent, updateWebhookConfig } from '@visitor-id/core/webhooks'
import { identificationPayload } from './payload.mjs'

export const benchSecret = 'bench-partner-secret-0123456789'

/** The deps updateWebhookConfig and enqueueWebhookEvent take (loopback receivers allowed). */
function webhookDeps(store) {
  const repos = createRepositories(store)
  return {
    store,
    repos,
    coordination: createMemoryCoordination(),
    settings: { allowPrivate: true, retryScheduleMs: [60_000], concurrency: 16 },
  }
}

/** Opens the directory's store for `work`, then closes it and frees the directory. */
export async function withStore(dataDir, work) {
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  try {
    return await work(store)
  } finally {
    await store.close()
    lock.release()
  }
}

/**
 * A fresh store with partners `names` (each with one organization it manages and an enabled
 * identification webhook to `urls[name]`). Returns { partners: { name: { partnerId, organizationId } } }.
 */
export async function createPartners(dataDir, names, urls) {
  return withStore(dataDir, async (store) => {
    await migrate(store)
    const deps = webhookDeps(store)
    const owner = await createUser(deps.repos, { email: 'bench-owner@example.com', name: 'Bench owner' })
    const partners = {}
    for (const name of names) {
      const { partner } = await createPartner(deps.repos, { name: `Partner ${name}` })
      const { organization } = await createOrganization(deps.repos, {
        name: `Organization of partner ${name}`,
        domain: `partner-${name.toLowerCase()}.example`,
        ownerUserId: owner.id,
        partnerId: partner.id,
      })
      await updateWebhookConfig(deps, partner.id, 'identification', { url: urls[name], secret: benchSecret })
      partners[name] = { partnerId: partner.id, organizationId: organization.id, name: organization.name }
    }
    return { partners }
  })
}

/** Points each partner's identification webhook at `urls[name]` (receivers' ports change per run). */
export async function pointWebhooks(dataDir, partners, urls) {
  await withStore(dataDir, async (store) => {
    const deps = webhookDeps(store)
    for (const [name, { partnerId }] of Object.entries(partners)) {
      await updateWebhookConfig(deps, partnerId, 'identification', { url: urls[name], secret: benchSecret })
    }
  })
}

/**
 * Queues `count` visitor.identified events of the partner's organization with enqueueWebhookEvent,
 * `parallel` at a time (the store runs a few queries side by side). Returns the seconds it took.
 */
export async function enqueueDeliveries(dataDir, partner, count, { parallel = 4, log = () => {} } = {}) {
  return withStore(dataDir, async (store) => {
    const deps = webhookDeps(store)
    const organization = { id: partner.organizationId, name: partner.name }
    const started = performance.now()
    let next = 0
    let queued = 0
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < count) {
          const n = next++
          const id = await enqueueWebhookEvent(deps, {
            organizationId: organization.id,
            eventId: randomUUID(),
            eventType: 'visitor.identified',
            payload: identificationPayload(organization, n),
          })
          if (!id) throw new Error('enqueueWebhookEvent queued nothing: is the webhook configured?')
          queued++
          if (queued % 2000 === 0) {
            log(
              `queued ${queued} of ${count} (${(queued / ((performance.now() - started) / 1000)).toFixed(0)}/s)`,
            )
          }
        }
      }),
    )
    const seconds = (performance.now() - started) / 1000
    await waitForMerges(store)
    return seconds
  })
}

/** Waits until the store has had no merge under way for `quietMs` (at most `maxMs`). */
export async function waitForMerges(store, { quietMs = 2000, maxMs = 120_000 } = {}) {
  const started = performance.now()
  let quietSince = started
  while (performance.now() - started < maxMs) {
    const [{ merges }] = await store.query(
      'SELECT count() AS merges FROM system.merges WHERE database = currentDatabase()',
    )
    if (Number(merges) > 0) quietSince = performance.now()
    else if (performance.now() - quietSince >= quietMs) break
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return performance.now() - started
}
