// What the audience-sync tests share, over a started harness: installing an integration type
// through the OAuth server the test runs, contacts of one job title, a list a flow syncs on each
// refresh, and the flow's runs as its log shows them.
import { createHash } from 'node:crypto'
import type { IntegrationType } from '@visitor-id/core/integrations'
import { expect } from 'vitest'
import type { Harness } from './harness-api.js'
import { until } from './until.js'

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The fixtures of one test file; `harness` is called on each use (the harness starts in `beforeAll`).
 * @example const { installed, contacts, syncedList, refreshedRun } = audienceSyncFixtures(() => h)
 */
export function audienceSyncFixtures(harness: () => Harness) {
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    harness().request({ method, url: `/api/v1${url}`, ...(payload ? { payload } : {}) })

  /** Installs the type for a new organization (the user authorizes on the OAuth server). */
  async function installed(type: IntegrationType, name: string) {
    const organizationId = (await api('POST', '/organization', { organizationName: name })).json()
      .id as string
    const { url } = (
      await api(
        'GET',
        `/integrations/request-install?integrationType=${type}&organizationId=${organizationId}`,
      )
    ).json()
    const answer = await fetch(url, { redirect: 'manual' })
    const back = new URL(answer.headers.get('location')!)
    const page = await harness().server.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })
    expect(page.body).toContain('Connected')
    return { organizationId, url: new URL(url), page: page.body }
  }

  const select = (organizationId: string, integrationType: IntegrationType, accountId: string) =>
    api('POST', '/integrations/account/select', { organizationId, integrationType, accountId })

  /** `count` contacts of this job title (emails `<title><n>@Sync.test`); their hashes, sorted. */
  async function contacts(title: string, count: number): Promise<string[]> {
    const at = new Date().toISOString()
    const rows = Array.from({ length: count }, (_, n) => ({
      id: `${title}-${n}`,
      email: `${title}${n}@Sync.test`,
      job_title: title,
      created_at: at,
      updated_at: at,
      version: 1,
    }))
    await harness().store.insert('contacts', rows)
    return rows.map((row) => sha256Hex(row.email.toLowerCase())).sort()
  }

  /** A list of the contacts with this job title, and a flow syncing it on each refresh. */
  async function syncedList(organizationId: string, title: string, integrationType: IntegrationType) {
    const saved = await api('POST', '/lists/save', {
      organizationId,
      listName: title,
      contacts_found: 0,
      filter: { contact: { job_titles: [title] } },
    })
    expect(saved.statusCode, saved.body).toBe(200)
    const listId = saved.json().id as string
    const flow = await api('POST', '/integrations/flows', {
      organizationId,
      title: `${title} audience`,
      nodes: {
        trigger: { type: 'list.refreshed', listId },
        actions: [{ type: 'audience.sync', listId, integrationType }],
      },
    })
    expect(flow.statusCode, flow.body).toBe(200)
    return { listId, flowId: flow.json().id as string }
  }

  /** The flow's run number `n` (1 for the first), once its log has it. */
  function runNumber(organizationId: string, flowId: string, n: number) {
    return until(async () => {
      const runs = (await api('GET', `/integrations/${organizationId}/flows/${flowId}`)).json().runs
      return runs.length >= n ? runs[0] : undefined
    }, 20_000)
  }

  /** Refreshes the list and waits for the flow's run number `n`. */
  async function refreshedRun(organizationId: string, ids: { listId: string; flowId: string }, n: number) {
    expect((await api('POST', `/lists/refresh/${ids.listId}`)).statusCode).toBe(200)
    return runNumber(organizationId, ids.flowId, n)
  }

  return { api, installed, select, contacts, syncedList, runNumber, refreshedRun }
}
