// The lists benchmark's dataset: companies, contacts (through their materialized views, so
// `contact_keys` and `contact_facets` fill as an import fills them) and identified visitors of the
// measured organization, written in-engine into the real tables of a data directory while no
// server runs on it. Every value is a hash of the row's number, so the same sizes give the same data.
//
// The distributions are chosen so that the benchmark's filters select known shares (see `filters`
// below): seniority, department and country are drawn independently by weight, the company
// uniformly among the companies, whose industry is uniform over 10 values.
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { waitForMerges } from '../analytics/dataset.mjs'

const seniorities = { 'c-level': 5, vp: 8, director: 12, manager: 20, senior: 25, entry: 30 }
const departments = {
  engineering: 25,
  sales: 20,
  marketing: 15,
  operations: 12,
  finance: 10,
  product: 8,
  design: 5,
  hr: 5,
}
const countries = { US: 40, GB: 10, DE: 10, FR: 8, CA: 7, NL: 5, ES: 5, IT: 5, BR: 5, IN: 5 }
const industries = [
  'SaaS',
  'Fintech',
  'Healthcare',
  'Retail',
  'Manufacturing',
  'Education',
  'Media',
  'Logistics',
  'Energy',
  'Telecom',
]
const sizes = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001+']
const companyCountries = ['US', 'GB', 'DE', 'FR', 'CA', 'NL', 'ES', 'IT']
const titleLevels = {
  'c-level': 'Chief',
  vp: 'VP',
  director: 'Director of',
  manager: 'Manager,',
  senior: 'Senior',
  entry: 'Associate',
}

/** Shares in percent: 72 business email (a fifth of them also a personal one), 8 personal only, 20 none. */
export const emailShares = { business: 72, personalOnly: 8, none: 20 }
/** Contacts with an empty `company_id` (found by `company_domain`), percent. */
export const domainOnlyPercent = 10

const share = (weights, keys) => keys.reduce((sum, key) => sum + weights[key], 0) / 100

/**
 * The benchmark's filters, with the share of contacts each is built to select (the draws are
 * independent, so shares multiply).
 */
export const filters = {
  count3: {
    label: 'company + contact, three keys',
    filter: {
      company: { industries: ['SaaS', 'Fintech'] },
      contact: { seniorities: ['vp', 'c-level'], countries: ['US', 'GB'] },
    },
    share: 0.2 * share(seniorities, ['vp', 'c-level']) * share(countries, ['US', 'GB']),
  },
  contact3: {
    label: 'contact only, three keys',
    filter: {
      contact: {
        seniorities: ['director', 'vp'],
        departments: ['engineering', 'product'],
        countries: ['US', 'DE'],
      },
    },
    share:
      share(seniorities, ['director', 'vp']) *
      share(departments, ['engineering', 'product']) *
      share(countries, ['US', 'DE']),
  },
  company1: {
    label: 'one company key',
    filter: { company: { industries: ['SaaS'] } },
    share: 0.1,
  },
  none: { label: 'no filter', filter: {}, share: 1 },
  list100k: {
    label: 'the 100 k list',
    filter: {
      company: { industries: ['SaaS', 'Fintech'] },
      contact: { seniorities: ['c-level', 'vp', 'director'], departments: ['sales'] },
    },
    share: 0.2 * share(seniorities, ['c-level', 'vp', 'director']) * share(departments, ['sales']),
  },
  list1m: {
    label: 'the 1 M list',
    filter: {
      company: { industries: industries.slice(0, 5) },
      contact: { departments: ['engineering'], countries: ['US', 'GB', 'DE', 'FR', 'CA', 'NL'] },
    },
    share: 0.5 * share(departments, ['engineering']) * share(countries, ['US', 'GB', 'DE', 'FR', 'CA', 'NL']),
  },
}

// A 1-based pick by weight from `hash % 100`.
const cumulative = (weights) => {
  let sum = 0
  return Object.values(weights).map((w) => {
    sum += w
    return sum
  })
}
const pick = (weights, hash) => `arrayFirstIndex(c -> c > ${hash} % 100, [${cumulative(weights).join(', ')}])`
const strings = (values) => `[${values.map((v) => `'${v}'`).join(', ')}]`

const companiesSql = `
INSERT INTO companies (id, name, domain, industry, size, employee_size_range, revenue_range, country,
  region, city, source, created_at, updated_at, version)
SELECT
  concat('co-', leftPad(toString(number), 7, '0')),
  concat('Company ', toString(number)),
  concat('company', toString(number), '.example'),
  ${strings(industries)}[number % ${industries.length} + 1],
  '',
  ${strings(sizes)}[cityHash64(number, 'size') % ${sizes.length} + 1],
  '',
  ${strings(companyCountries)}[cityHash64(number, 'country') % ${companyCountries.length} + 1],
  '', '', 'import', now64(3), now64(3), 1
FROM numbers({companies:UInt64})`

const contactsSql = `
INSERT INTO contacts (id, email, personal_email, first_name, last_name, job_title, seniority, department,
  country, company_id, company_domain, created_at, updated_at, version)
SELECT
  concat('ct-', toString(number)),
  if(e < ${emailShares.business}, concat('person', toString(number), '@company', toString(k), '.example'), ''),
  if(e < ${emailShares.business / 5} OR (e >= ${emailShares.business} AND e < ${emailShares.business + emailShares.personalOnly}),
    concat('p', toString(number), '@mail.example'), ''),
  'First', concat('Last', toString(number)),
  concat(${strings(Object.values(titleLevels))}[si], ' ', initcap(${strings(Object.keys(departments))}[di])),
  ${strings(Object.keys(seniorities))}[si],
  ${strings(Object.keys(departments))}[di],
  ${strings(Object.keys(countries))}[ci],
  if(cityHash64(number, 'link') % 100 < ${domainOnlyPercent}, '', concat('co-', leftPad(toString(k), 7, '0'))),
  concat('company', toString(k), '.example'),
  now64(3), now64(3), 1
FROM (
  SELECT number,
    cityHash64(number, 'company') % {companies:UInt64} AS k,
    cityHash64(number, 'email') % 100 AS e,
    ${pick(seniorities, "cityHash64(number, 'seniority')")} AS si,
    ${pick(departments, "cityHash64(number, 'department')")} AS di,
    ${pick(countries, "cityHash64(number, 'country')")} AS ci
  FROM numbers({start:UInt64}, {rows:UInt64})
)`

const visitorsSql = `
INSERT INTO visitors (id, organization_id, contact_id, email, identified_at, first_seen_at, last_seen_at,
  created_at, updated_at, version)
SELECT
  reinterpretAsUUID(concat(reinterpretAsFixedString(cityHash64(number, 'a')), reinterpretAsFixedString(cityHash64(number, 'b')))),
  {organizationId:UUID},
  concat('ct-', toString(cityHash64(number, 'contact') % {contacts:UInt64})),
  '', now64(3), now64(3), now64(3), now64(3), now64(3), 1
FROM numbers({visitors:UInt64})`

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`
const count = (n) => Number(n).toLocaleString('en')

/**
 * Writes the dataset into the store of `dataDir` (no server may run on it). Returns the counts and
 * the times. `chunkRows` contacts per insert (1 M), `visitors` identified visitors of the
 * organization (each a random contact), `companies` companies.
 * @example await fillListsDataset(dir, { contacts: 200_000, organizationId })
 */
export async function fillListsDataset(dataDir, options) {
  const {
    contacts = 10_000_000,
    companies = 200_000,
    visitors = 100_000,
    chunkRows = 1_000_000,
    organizationId,
    log = console.log,
  } = options
  if (!organizationId) throw new Error('fillListsDataset: organizationId is required')
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  const times = {}
  try {
    let started = performance.now()
    await migrate(store)
    times.migrate = performance.now() - started

    started = performance.now()
    await store.command(companiesSql, { companies })
    times.companies = performance.now() - started
    log(`dataset: ${count(companies)} companies in ${seconds(times.companies)}`)

    times.contacts = 0
    for (let start = 0; start < contacts; start += chunkRows) {
      const rows = Math.min(chunkRows, contacts - start)
      started = performance.now()
      await store.command(contactsSql, { companies, start, rows })
      const ms = performance.now() - started
      times.contacts += ms
      log(`dataset: contacts ${count(start + rows)}/${count(contacts)}, this insert ${seconds(ms)}`)
    }

    started = performance.now()
    await store.command(visitorsSql, { organizationId, contacts, visitors })
    times.visitors = performance.now() - started

    // The background merges the inserts started finish, then the facets are merged into one part
    // as `importContacts` does at the end of every import (what a count reads after an import).
    times.merges = await waitForMerges(store)
    log(`dataset: background merges done ${seconds(times.merges)} after the last insert`)
    started = performance.now()
    await store.command('OPTIMIZE TABLE contact_facets FINAL')
    times.optimize = performance.now() - started
    log(`dataset: contact_facets merged into one part in ${seconds(times.optimize)}, as an import ends`)
    const counts = await datasetCounts(store, organizationId)
    log(
      `dataset: ${count(counts.contacts)} contacts (${(counts.enrichedShare * 100).toFixed(1)} % with an email, ` +
        `${(counts.personalOnlyShare * 100).toFixed(1)} % personal only), ${count(counts.companies)} companies, ` +
        `${count(counts.visitors)} identified visitors; parts ${JSON.stringify(counts.parts)}`,
    )
    return { counts, times, endedAt: new Date().toISOString() }
  } finally {
    await store.close()
    lock.release()
  }
}

/** What a filled store holds, and its active parts per table. */
export async function datasetCounts(store, organizationId) {
  const [row] = await store.query(
    `SELECT
      (SELECT count() FROM contacts) AS contacts,
      (SELECT count() FROM contact_facets) AS facets,
      (SELECT count() FROM contact_keys) AS contact_keys,
      (SELECT countIf(email_sha256 != '') / count() FROM contact_facets) AS enriched_share,
      (SELECT countIf(email = '' AND personal_email != '') / count() FROM contacts) AS personal_only_share,
      (SELECT count() FROM companies) AS companies,
      (SELECT count() FROM visitors WHERE organization_id = {organizationId:UUID}) AS visitors`,
    { organizationId },
  )
  return {
    contacts: Number(row.contacts),
    facets: Number(row.facets),
    contactKeys: Number(row.contact_keys),
    enrichedShare: Number(row.enriched_share),
    personalOnlyShare: Number(row.personal_only_share),
    companies: Number(row.companies),
    visitors: Number(row.visitors),
    parts: await activeParts(store),
  }
}

/** Active parts of the tables the benchmark reads. */
export async function activeParts(store) {
  const rows = await store.query(
    `SELECT table, count() AS parts FROM system.parts
     WHERE database = currentDatabase() AND active
       AND table IN ('contacts', 'contact_facets', 'contact_keys', 'companies', 'list_members')
     GROUP BY table ORDER BY table`,
  )
  return Object.fromEntries(rows.map((r) => [r.table, Number(r.parts)]))
}
