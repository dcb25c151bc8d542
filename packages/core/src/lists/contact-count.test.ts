// The contact count against an independent count in JavaScript over the generated rows, for every
// key of the vocabulary, alone and combined, on the real embedded store.

import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Filter } from '../filters/filter.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { countContacts } from './contact-count.js'

const tmp = tempDir('vid-contact-count-')
let store: Store

const pick = <T>(list: readonly T[], n: number) => list[n % list.length]!
const industries = ['SaaS', 'Fintech', 'Retail']
const sizes = ['1-10', '51-200', '201-500']
const countries = ['US', 'DE', 'FR']
const companies = Array.from({ length: 12 }, (_, i) => ({
  id: `co-${i}`,
  domain: `company${i}.test`,
  industry: pick(industries, i),
  employee_size_range: pick(sizes, i * 7),
  country: pick(countries, i * 5),
  region: pick(['CA', 'BY', 'IDF'], i),
  city: pick(['Austin', 'Berlin', 'Paris', 'Lyon'], i),
  revenue_range: pick(['$1M-$10M', '$10M-$50M'], i),
}))
const titles = ['Chief Technology Officer', 'VP Engineering', 'Software Engineer', 'Head of Sales', 'CTO']
interface Contact {
  id: string
  job_title: string
  seniority: string
  department: string
  country: string
  company_id: string
  company_domain: string
  deleted: boolean
}
const contacts: Contact[] = Array.from({ length: 400 }, (_, n) => {
  const company = companies[Math.floor(n / 4) % companies.length]!
  // A quarter name their company by id, a quarter by domain only, a quarter an unknown domain, the
  // rest a company id that was never imported (with a known company's domain beside it).
  const link = n % 4
  return {
    id: `contact-${n}`,
    job_title: pick(titles, n * 3),
    seniority: pick(['c-level', 'vp', 'senior', 'entry'], n * 5),
    department: pick(['engineering', 'sales', 'marketing'], n * 11),
    country: pick(countries, n * 13),
    company_id: link === 0 ? company.id : link === 3 ? `co-missing-${n}` : '',
    company_domain: link === 1 || link === 3 ? company.domain : link === 2 ? `unknown${n % 3}.test` : '',
    deleted: n % 50 === 0,
  }
})

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  const at = new Date().toISOString()
  await store.insert(
    'companies',
    companies.map((c) => ({ ...c, name: c.id, created_at: at, updated_at: at, version: 1 })),
  )
  const row = (c: Contact, version: number, deleted: boolean) => ({
    id: c.id,
    email: `${c.id}@x.test`,
    job_title: c.job_title,
    seniority: c.seniority,
    department: c.department,
    country: c.country,
    company_id: c.company_id,
    company_domain: c.company_domain,
    created_at: at,
    updated_at: at,
    version,
    is_deleted: deleted ? 1 : 0,
  })
  // Two versions of every contact: the count sees the latest (and not the deleted ones).
  await store.insert(
    'contacts',
    contacts.map((c) => row({ ...c, job_title: 'Old title' }, 1, false)),
  )
  await store.insert(
    'contacts',
    contacts.map((c) => row(c, 2, c.deleted)),
  )
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

/** The same count in JavaScript: membership case-insensitive, titles as substrings, sides ANDed. */
function expected(filter: Filter): number {
  const lower = (list?: string[]) => list?.map((v) => v.toLowerCase())
  const company = filter.company ?? {}
  const contact = filter.contact ?? {}
  return contacts.filter((c) => {
    if (c.deleted) return false
    // The company as identification finds it: by the id the contact names, else by its domain.
    const co = c.company_id
      ? companies.find((x) => x.id === c.company_id)
      : companies.find((x) => x.domain === c.company_domain)
    const isIn = (list: string[] | undefined, value: string | undefined) =>
      list === undefined ||
      list.length === 0 ||
      (value !== undefined && lower(list)!.includes(value.toLowerCase()))
    const sizeList = [...(company.company_sizes ?? []), ...(company.employee_size_ranges ?? [])]
    const companyKeys = Object.values(company).filter((list) => list && list.length > 0).length
    const onlyDomains = companyKeys === 1 && (company.domains?.length ?? 0) > 0
    const companyOk =
      companyKeys === 0 ||
      (co !== undefined &&
        isIn(company.industries, co.industry) &&
        isIn(sizeList.length ? sizeList : undefined, co.employee_size_range) &&
        isIn(company.domains, co.domain) &&
        isIn(company.countries, co.country) &&
        isIn(company.regions, co.region) &&
        isIn(company.cities, co.city) &&
        isIn(company.revenue_ranges, co.revenue_range)) ||
      (onlyDomains && isIn(company.domains, c.company_domain))
    const titleOk =
      !contact.job_titles?.length ||
      contact.job_titles.some((t) => c.job_title.toLowerCase().includes(t.toLowerCase()))
    const contactOk =
      titleOk &&
      isIn(contact.seniorities, c.seniority) &&
      isIn(contact.departments, c.department) &&
      isIn(contact.countries, c.country)
    return companyOk && contactOk
  }).length
}

const filters: Filter[] = [
  {},
  { company: {}, contact: {} },
  { company: { industries: ['saas'] } },
  { company: { company_sizes: ['51-200'], employee_size_ranges: ['1-10'] } },
  { company: { domains: ['company3.test', 'unknown1.test'] } },
  { company: { domains: ['company3.test', 'company4.test', 'unknown1.test'], industries: ['saas'] } },
  { company: { countries: ['FR', 'DE'], regions: ['by', 'IDF'], cities: ['Berlin', 'Paris'] } },
  { company: { revenue_ranges: ['$1M-$10M'] } },
  { contact: { job_titles: ['cto', 'chief'] } },
  { contact: { seniorities: ['VP', 'c-level'], departments: ['engineering'] } },
  { contact: { countries: ['fr'] } },
  {
    company: { industries: ['SaaS', 'Fintech'], countries: ['US', 'FR'] },
    contact: { job_titles: ['engineer', 'cto'], seniorities: ['senior', 'c-level'] },
  },
  { company: { industries: ['Nope'] } },
]

describe('countContacts', () => {
  it.each(filters)('%o', async (filter) => {
    expect(await countContacts(store, filter)).toBe(expected(filter))
  })

  it('a three-key count equals the same count in plain SQL over contacts and companies', async () => {
    const filter: Filter = {
      company: { industries: ['SaaS', 'Fintech'] },
      contact: { seniorities: ['vp', 'c-level'], countries: ['US', 'FR'] },
    }
    const [plain] = await store.query<{ n: number }>(
      `SELECT count() AS n FROM contacts AS c FINAL
       LEFT JOIN (SELECT id, domain, industry FROM companies FINAL) AS by_id ON by_id.id = c.company_id
       LEFT JOIN (SELECT domain, industry FROM companies FINAL) AS by_domain ON by_domain.domain = c.company_domain
       WHERE lower(if(c.company_id != '', by_id.industry, by_domain.industry)) IN ('saas', 'fintech')
         AND lower(c.seniority) IN ('vp', 'c-level') AND lower(c.country) IN ('us', 'fr')`,
    )
    expect(Number(plain!.n)).toBeGreaterThan(0)
    expect(await countContacts(store, filter)).toBe(Number(plain!.n))
  })

  it('the generated data exercises every key (no filter above is trivially 0 or all)', () => {
    const all = expected({})
    expect(all).toBe(392)
    for (const filter of filters.slice(2, -1)) {
      const n = expected(filter)
      expect(n, JSON.stringify(filter)).toBeGreaterThan(0)
      expect(n, JSON.stringify(filter)).toBeLessThan(all)
    }
  })
})
