// Saved lists on the real embedded store: counts against plain SQL over `contacts` written here by
// hand, the export's hashes against SHA-256 computed here from the raw emails, snapshots, the
// auto-update pass and a refresh racing a delete.
import { createHash, randomUUID } from 'node:crypto'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryCoordination } from '../coordination/index.js'
import type { Coordination } from '../coordination/ports.js'
import { AppError } from '../errors.js'
import type { Filter } from '../filters/filter.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import {
  autoUpdateStatus,
  deleteList,
  findList,
  type ListDeps,
  listEmailHashes,
  organizationLists,
  refreshDueLists,
  refreshList,
  saveList,
} from './lists.js'
import type { ListRow } from './rows.js'

const tmp = tempDir('vid-lists-')
let store: Store
let repos: Repositories
let coordination: Coordination
let deps: ListDeps
const organizationId = randomUUID()
const otherOrganizationId = randomUUID()

const pick = <T>(list: readonly T[], n: number) => list[n % list.length]!
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

interface Contact {
  id: string
  email: string
  personal_email: string
  email_sha256?: string
  seniority: string
  country: string
  company_id: string
}
// 600 contacts: business emails in mixed case with spaces around, some shared by two contacts,
// personal-only contacts, contacts known by a hash alone, and contacts with no email at all.
const contacts: Contact[] = Array.from({ length: 600 }, (_, n) => {
  const kind = n % 6
  const shared = n % 5 === 0 ? `shared${n % 20}` : `person${n}`
  return {
    id: `contact-${n}`,
    email:
      kind <= 2 ? (kind === 1 ? `  ${shared.toUpperCase()}@Example.TEST ` : `${shared}@example.test`) : '',
    personal_email: kind === 3 || kind === 1 ? ` Home${n}@Mail.test` : '',
    ...(kind === 4 ? { email_sha256: sha256(`hashed${n}@example.test`).toUpperCase() } : {}),
    seniority: pick(['vp', 'c-level', 'senior', 'entry'], n * 7),
    country: pick(['US', 'DE', 'FR'], n * 11),
    company_id: `co-${n % 10}`,
  }
})
const companies = Array.from({ length: 10 }, (_, i) => ({
  id: `co-${i}`,
  industry: pick(['SaaS', 'Retail'], i),
}))

/** The enriched email's hash as the export must write it, computed here from the raw row. */
function enrichedHash(contact: Contact): string {
  if (contact.email) return sha256(contact.email.trim().toLowerCase())
  if (contact.email_sha256) return contact.email_sha256.toLowerCase()
  if (contact.personal_email) return sha256(contact.personal_email.trim().toLowerCase())
  return ''
}

const at = () => new Date().toISOString()
async function insertContacts(rows: Contact[], version: number, deleted = false) {
  await store.insert(
    'contacts',
    rows.map((c) => ({ ...c, created_at: at(), updated_at: at(), version, is_deleted: deleted ? 1 : 0 })),
  )
}

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
  coordination = createMemoryCoordination()
  deps = { store, repos, locks: coordination.locks }
  await store.insert(
    'companies',
    companies.map((c) => ({ ...c, name: c.id, created_at: at(), updated_at: at(), version: 1 })),
  )
  await insertContacts(contacts, 1)
  // Visitors of the organization identified as every seventh contact (and one of another organization).
  const visitor = (organization: string, contactId: string) => ({
    id: randomUUID(),
    organization_id: organization,
    contact_id: contactId,
    email: `${contactId}@example.test`,
    first_seen_at: at(),
    last_seen_at: at(),
    created_at: at(),
    updated_at: at(),
    version: 1,
  })
  await store.insert('visitors', [
    ...contacts.filter((_, n) => n % 7 === 0).map((c) => visitor(organizationId, c.id)),
    visitor(otherOrganizationId, 'contact-1'),
  ])
})

afterAll(async () => {
  await coordination?.close()
  await store?.close()
  tmp.remove()
})

const vpsInSaas: Filter = { company: { industries: ['saas'] }, contact: { seniorities: ['VP', 'c-level'] } }

/** The same members in plain SQL over `contacts`, written without the facets table. */
async function plainMembers(): Promise<string[]> {
  const rows = await store.query<{ id: string }>(
    `SELECT c.id AS id FROM contacts AS c FINAL
     INNER JOIN (SELECT id FROM companies FINAL WHERE lower(industry) = 'saas') AS co ON co.id = c.company_id
     WHERE lower(c.seniority) IN ('vp', 'c-level') ORDER BY id`,
  )
  return rows.map((row) => row.id)
}

async function allHashes(list: ListRow, pageSize?: number): Promise<string[]> {
  const hashes: string[] = []
  for await (const hash of listEmailHashes(store, list, pageSize)) hashes.push(hash)
  return hashes
}

const expectedHashes = (ids: readonly string[]) =>
  [...new Set(contacts.filter((c) => ids.includes(c.id)).map(enrichedHash))].filter(Boolean).sort()

describe('lists', () => {
  let list: ListRow

  it('save computes the members: counts equal the plain SQL, matches the organization visitors', async () => {
    list = await saveList(deps, organizationId, { name: 'VPs in SaaS', filter: vpsInSaas, contactsFound: 7 })
    expect(list.id).toMatch(/^list_[0-9a-f]{24}$/)
    const members = await plainMembers()
    expect(members.length).toBeGreaterThan(20)
    expect(list.contacts_num).toBe(members.length)
    expect(list.matched_contacts_num).toBe(members.filter((id) => Number(id.split('-')[1]) % 7 === 0).length)
    expect(list.matched_contacts_num).toBeGreaterThan(0)
    expect(list.enriched_emails).toBe(expectedHashes(members).length)
    expect(list.contacts_found).toBe(7)
    expect(list.last_synced_at).not.toBeNull()
    expect(autoUpdateStatus(list)).toBe('disabled')
  })

  it('the export hashes, line by line, are the deduplicated SHA-256 of the trimmed, lowercased emails', async () => {
    const hashes = await allHashes(list)
    const expected = expectedHashes(await plainMembers())
    expect(hashes).toEqual(expected)
    // Shared addresses (some in capitals with spaces around) appear once; personal-only and
    // hash-only members are there; no plaintext anywhere.
    expect(expected.length).toBeLessThan((await plainMembers()).length)
    for (const hash of hashes) expect(hash).toMatch(/^[0-9a-f]{64}$/)
    // Pages of any size read the same hashes.
    expect(await allHashes(list, 7)).toEqual(hashes)
  })

  it('saving the same name again updates that list', async () => {
    const again = await saveList(deps, organizationId, {
      name: 'VPs in SaaS',
      filter: { contact: { countries: ['fr'] } },
      contactsFound: 3,
      autoUpdate: true,
    })
    expect(again.id).toBe(list.id)
    expect(again.contacts_num).toBe(contacts.filter((c) => c.country === 'FR').length)
    expect(autoUpdateStatus(again)).toBe('enabled')
    expect((await organizationLists(repos, organizationId)).map((l) => l.id)).toEqual([list.id])
    list = again
  })

  it('a refresh recomputes from the stored filter and keeps only the last two snapshots', async () => {
    const fr = contacts.filter((c) => c.country === 'FR')
    await insertContacts(fr.slice(0, 10), 2, true)
    const first = await refreshList(deps, list)
    expect(first.contacts_num).toBe(fr.length - 10)
    expect(Date.parse(first.last_synced_at!)).toBeGreaterThanOrEqual(Date.parse(list.last_synced_at!))
    const second = await refreshList(deps, first)
    const [{ snapshots }] = (await store.query(
      'SELECT groupArray(DISTINCT snapshot) AS snapshots FROM list_members WHERE list_id = {id:String}',
      { id: list.id },
    )) as [{ snapshots: string[] }]
    expect(snapshots.sort()).toEqual([first.snapshot, second.snapshot].sort())
    await insertContacts(fr.slice(0, 10), 3)
    list = await refreshList(deps, second)
    expect(list.contacts_num).toBe(fr.length)
  })

  it('the worker pass refreshes lists with auto-update once a day, not the others', async () => {
    const manual = await saveList(deps, organizationId, {
      name: 'manual',
      filter: {},
      contactsFound: 0,
    })
    const now = Date.now() + 25 * 60 * 60_000
    expect(await refreshDueLists(deps, { now })).toBe(1)
    expect(await refreshDueLists(deps, { now: Date.now() })).toBe(0)
    const after = await findList(repos, list.id)
    expect(after!.snapshot).not.toBe(list.snapshot)
    expect((await findList(repos, manual.id))!.snapshot).toBe(manual.snapshot)
    expect(manual.contacts_num).toBe(contacts.length)
    list = after!
  })

  it('a refresh racing a delete never brings the list back', async () => {
    for (let round = 0; round < 3; round++) {
      const racing = await saveList(deps, organizationId, {
        name: `race ${round}`,
        filter: {},
        contactsFound: 0,
      })
      const [refresh, removal] = await Promise.allSettled([
        refreshList(deps, racing),
        deleteList(deps, racing),
      ])
      expect(removal.status).toBe('fulfilled')
      if (refresh.status === 'rejected') {
        expect(refresh.reason).toBeInstanceOf(AppError)
        expect((refresh.reason as AppError).code).toBe('list_not_found')
      }
      expect(await findList(repos, racing.id)).toBeUndefined()
      await expect(refreshList(deps, racing)).rejects.toMatchObject({ code: 'list_not_found' })
      const [{ n }] = (await store.query(
        'SELECT count() AS n FROM list_members WHERE list_id = {id:String}',
        { id: racing.id },
      )) as [{ n: number }]
      expect(Number(n)).toBe(0)
    }
  })

  it('shows syncing while a refresh holds the list', () => {
    const future = new Date(Date.now() + 60_000).toISOString()
    expect(autoUpdateStatus({ ...list, refreshing_until: future })).toBe('syncing')
    expect(autoUpdateStatus({ ...list, refreshing_until: new Date(Date.now() - 1).toISOString() })).toBe(
      'enabled',
    )
  })
})
