// The integration_reconnect pass on the real embedded store, through a real SMTP server, on a clock
// the test moves: one email per grant to each member, never a second one for the same grant (its
// jobs long done), a new one after a reinstall; none for a far end, a refreshing grant, a refused
// one, or an organization whose preference is off.

import { type SmtpInbox, startSmtpInbox } from '@visitor-id/testing/smtp-inbox'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { until } from '@visitor-id/testing/until'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Config } from '../config.js'
import { createMemoryCoordination } from '../coordination/memory.js'
import type { Coordination } from '../coordination/ports.js'
import { nextVersion } from '../ids.js'
import type { IntegrationType } from '../integrations/integration-store.js'
import { createOrganization, createUser } from '../organizations/tenancy.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { integrationReconnectEmails } from './integration-reconnect.js'
import { lifecycleEmailJobName, sendLifecycleEmail } from './lifecycle.js'
import { createSmtpMailer, type Mailer } from './mailer.js'
import { updateOrganizationEmailPreferences } from './preferences.js'

const tmp = tempDir('vid-reconnect-')
const day = 24 * 3600_000
const now = Date.now()
let store: Store
let repos: Repositories
let coordination: Coordination
let smtp: SmtpInbox
let mailer: Mailer
const settings = {
  secretKey: undefined,
  audienceBatchSize: 1000,
  searchAds: undefined,
  socialAds: { name: 'Meta Ads' },
} as unknown as Config['integrations']
const publicUrl = 'https://id.example.test'

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
  coordination = createMemoryCoordination()
  smtp = await startSmtpInbox()
  mailer = createSmtpMailer({ smtpUrl: smtp.url, from: 'Visitor ID <mail@visitor-id.test>', timeoutMs: 2000 })
  const emailDeps = { store, repos, coordination, mailer, secret: 's'.repeat(32), publicUrl }
  coordination.jobs.process(lifecycleEmailJobName, async (job) => {
    await sendLifecycleEmail(emailDeps, job.data as never)
  })
})

afterAll(async () => {
  await coordination?.close()
  await mailer?.close()
  await smtp?.close()
  await store?.close()
  tmp.remove()
})

const pass = (clock: number) =>
  integrationReconnectEmails({ store, repos, coordination, settings, publicUrl }, clock)

/** An organization with an owner and, optionally, more members; their emails. */
async function organization(name: string, members: string[] = []) {
  const owner = await createUser(repos, { email: `owner@${name}.test` })
  const { organization } = await createOrganization(repos, { name, ownerUserId: owner.id })
  for (const email of members) {
    const user = await createUser(repos, { email })
    const at = new Date().toISOString()
    await repos.memberships.save({
      organization_id: organization.id,
      user_id: user.id,
      role: 'member',
      created_at: at,
      updated_at: at,
    })
  }
  return { id: organization.id, emails: [owner.email, ...members] }
}

/** The organization's integration as installation stores it (tokens need not open: none is used). */
async function grant(
  organizationId: string,
  type: IntegrationType,
  expiresAt: number,
  options: { refresh?: boolean; status?: string } = {},
) {
  const at = new Date().toISOString()
  await store.insert('integrations', [
    {
      organization_id: organizationId,
      type,
      status: options.status ?? 'connected',
      access_token: 'v1.sealed-access',
      refresh_token: options.refresh ? 'v1.sealed-refresh' : '',
      expires_at: new Date(expiresAt).toISOString(),
      scope: 'ads_management',
      ads_accounts: '[]',
      selected_account_id: '',
      connected_at: at,
      updated_at: at,
      version: nextVersion(),
      is_deleted: 0,
    },
  ])
}

/** The messages received so far: recipient, subject, text. */
async function inbox() {
  return Promise.all(
    smtp.messages.map(async (raw) => {
      const mail = await simpleParser(raw)
      const to = mail.to && !Array.isArray(mail.to) ? mail.to.text : ''
      return { to, subject: mail.subject ?? '', text: mail.text ?? '', html: String(mail.html) }
    }),
  )
}

const received = (count: number) => until(async () => (smtp.messages.length >= count ? inbox() : undefined))

describe('integration_reconnect', () => {
  it('mails each member once per grant ending within 7 days, and again for the grant of a reinstall', async () => {
    const acme = await organization('acme', ['bob@acme.test'])
    const far = await organization('far')
    const quiet = await organization('quiet')
    const refused = await organization('refused')
    await grant(acme.id, 'socialAds', now + 3 * day)
    // A grant that refreshes itself never needs a reconnection, whatever its token's expiry.
    await grant(acme.id, 'searchAds', now + 3600_000, { refresh: true })
    await grant(far.id, 'socialAds', now + 30 * day)
    await grant(quiet.id, 'socialAds', now + 2 * day)
    await updateOrganizationEmailPreferences(store, quiet.id, { integration_reconnect: false })
    await grant(refused.id, 'socialAds', now + 2 * day, { status: 'reauthorization_required' })

    expect(await pass(now)).toBe(2)
    const first = await received(2)
    expect(first.map((mail) => mail.to).sort()).toEqual(acme.emails.sort())
    const ends = new Date(now + 3 * day).toLocaleDateString('en-US', { dateStyle: 'long', timeZone: 'UTC' })
    for (const mail of first) {
      expect(mail.subject).toBe(`acme: reconnect Meta Ads before ${ends}`)
      expect(mail.text).toContain(`The Meta Ads connection of acme stops working on ${ends}.`)
      expect(mail.text).toContain(`Reconnect Meta Ads: ${publicUrl}/app/`)
      expect(mail.html).toContain(`<a href="${publicUrl}/app/">Reconnect Meta Ads</a>`)
    }

    // The hourly pass, its email jobs long done: nothing more for the same grants.
    for (const hours of [1, 2, 24, 70]) expect(await pass(now + hours * 3600_000)).toBe(0)
    // Six days before its end, the far grant's turn.
    expect(await pass(now + 24 * day)).toBe(1)
    expect((await received(3))[2]!.to).toBe(far.emails[0])
    expect(await pass(now + 25 * day)).toBe(0)

    // Reconnected: a new grant of 60 days, silent until its own last week.
    await grant(acme.id, 'socialAds', now + 60 * day)
    expect(await pass(now + 2 * day)).toBe(0)
    expect(await pass(now + 54 * day)).toBe(2)
    const renewed = (await received(5)).slice(3)
    expect(renewed.map((mail) => mail.to).sort()).toEqual(acme.emails.sort())
    expect(await pass(now + 55 * day)).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(smtp.messages).toHaveLength(5)
  })

  it('an organization that turns the email on again before the end is mailed by the next pass', async () => {
    const late = await organization('late')
    await grant(late.id, 'socialAds', now + 5 * day)
    await updateOrganizationEmailPreferences(store, late.id, { integration_reconnect: false })
    const before = smtp.messages.length
    expect(await pass(now)).toBe(0)
    await updateOrganizationEmailPreferences(store, late.id, { integration_reconnect: true })
    expect(await pass(now + 3600_000)).toBe(1)
    expect((await received(before + 1)).at(-1)!.to).toBe(late.emails[0])
    expect(await pass(now + 7200_000)).toBe(0)
  })
})
