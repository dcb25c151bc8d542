// After a batch is in ClickHouse: identify hits upsert the visitor (email, first/last seen,
// identified_at) so the API's visitor profile shows the contact, before the hit is acknowledged.
// A company derived from a business ASN (`as<number>`) or from a reverse DNS domain no imported
// company has (`dns:<domain>`) gets its `companies` row once per process, written in the
// background a few rows at a time: it is derived data (the ASN table or DNS can always rebuild
// it), so it must not slow the acknowledgement down. Page views alone never touch entity tables.
import {
  type CompanyRow,
  nextVersion,
  type Repositories,
  type Store,
  type VisitorRow,
} from '@visitor-id/core'
import type { PageViewRow } from './page-view-row.js'

export interface IdentityWriterOptions {
  store: Store
  repos: Repositories
  /** Called for each visitor identified for the first time (e.g. to start identification jobs). */
  onIdentified?: (visitor: VisitorRow) => Promise<void>
  /** How often new derived (ASN, DNS) companies are written (default 2 s). */
  companyFlushMs?: number
  onError?: (error: unknown) => void
}

export interface IdentityWriter {
  /** The durable sink's `afterWrite` step. */
  afterWrite(rows: PageViewRow[]): Promise<void>
  /** Writes the companies still waiting. */
  close(): Promise<void>
}

const earliest = (a: string, b: string) => (Date.parse(a) <= Date.parse(b) ? a : b)
const latest = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b)

/** Builds the `afterWrite` step of the durable sink. Idempotent: a replayed batch rewrites the same rows. */
export function createIdentityWriter(options: IdentityWriterOptions): IdentityWriter {
  const knownCompanies = new Set<string>()
  const waiting = new Map<string, CompanyRow>()
  let timer: NodeJS.Timeout | undefined

  const upsertVisitor = async (row: PageViewRow) => {
    const { repos, store } = options
    const existing = await repos.visitors.get({ organization_id: row.organization_id, id: row.visitor_id })
    const firstHit = existing
      ? undefined
      : (
          await store.query<{ first: string }>(
            `SELECT min(timestamp) AS first FROM page_views
             WHERE organization_id = {organizationId:UUID} AND visitor_id = {visitorId:UUID}`,
            { organizationId: row.organization_id, visitorId: row.visitor_id },
          )
        )[0]?.first
    const now = new Date().toISOString()
    const visitor: VisitorRow = {
      id: row.visitor_id,
      organization_id: row.organization_id,
      email: row.email,
      first_name: existing?.first_name ?? '',
      last_name: existing?.last_name ?? '',
      job_title: existing?.job_title ?? '',
      seniority: existing?.seniority ?? '',
      department: existing?.department ?? '',
      country: existing?.country ?? '',
      linkedin_url: existing?.linkedin_url ?? '',
      company_id: existing?.company_id || row.company_id,
      identified_at: existing?.identified_at ?? row.timestamp,
      first_seen_at: earliest(existing?.first_seen_at ?? firstHit ?? row.timestamp, row.timestamp),
      last_seen_at: latest(existing?.last_seen_at ?? row.timestamp, row.timestamp),
      created_at: existing?.created_at ?? now,
      updated_at: now,
    }
    await repos.visitors.save(visitor)
    if (!existing?.identified_at) await options.onIdentified?.(visitor)
  }

  /** The row of a derived company: `as<number>` named after the ASN owner, `dns:<domain>` after the domain. */
  const derivedCompany = (row: PageViewRow): CompanyRow => {
    const now = new Date().toISOString()
    const domain = row.company_id.startsWith('dns:') ? row.company_id.slice(4) : ''
    return {
      id: row.company_id,
      name: domain || row.isp,
      domain,
      industry: '',
      size: '',
      employee_size_range: '',
      revenue_range: '',
      linkedin_url: '',
      website_url: '',
      description: '',
      logo_url: '',
      address: '',
      address_2: '',
      city: '',
      region: '',
      postal_code: '',
      country: row.country,
      source: domain ? 'dns' : 'asn',
      created_at: now,
      updated_at: now,
    }
  }

  const writeCompanies = async () => {
    timer = undefined
    const companies = [...waiting.values()]
    waiting.clear()
    if (companies.length === 0) return
    try {
      // One insert for all of them (the repository saves one row per insert).
      await options.store.insert(
        'companies',
        companies.map((company) => ({ ...company, version: nextVersion(), is_deleted: 0 })),
      )
      for (const company of companies) knownCompanies.add(company.id)
    } catch (error) {
      for (const company of companies) if (!waiting.has(company.id)) waiting.set(company.id, company)
      options.onError?.(error)
      schedule()
    }
  }

  const schedule = () => {
    if (timer || waiting.size === 0) return
    timer = setTimeout(() => void writeCompanies(), options.companyFlushMs ?? 2000)
    timer.unref()
  }

  return {
    async afterWrite(rows) {
      // The last identify of a visitor in the batch wins.
      const identified = new Map<string, PageViewRow>()
      for (const row of rows) {
        if (row.type === 'identify' && row.email)
          identified.set(`${row.organization_id}/${row.visitor_id}`, row)
        if (
          /^(?:as\d+$|dns:)/.test(row.company_id) &&
          !knownCompanies.has(row.company_id) &&
          !waiting.has(row.company_id)
        ) {
          waiting.set(row.company_id, derivedCompany(row))
        }
      }
      for (const row of identified.values()) await upsertVisitor(row)
      schedule()
    },
    async close() {
      if (timer) clearTimeout(timer)
      await writeCompanies()
    },
  }
}
