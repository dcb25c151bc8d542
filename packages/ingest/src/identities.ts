// After a batch is in ClickHouse: its identify hits go to the identification queue (core
// identification runs there: contact, company, credits, the visitor.identified event).
// A company derived from a business ASN (`as<number>`) or from a reverse DNS domain no imported
// company has (`dns:<domain>`) gets its `companies` row once per process, written in the
// background a few rows at a time: it is derived data (the ASN table or DNS can always rebuild
// it), so it must not slow the acknowledgement down. Page views alone never touch entity tables.
import type { CompanyRow } from '@visitor-id/core/companies'
import type { IdentifyHit } from '@visitor-id/core/identification'
import { nextVersion } from '@visitor-id/core/ids'
import type { Store } from '@visitor-id/core/store'
import type { PageViewRow } from './page-view-row.js'

export interface IdentityWriterOptions {
  store: Store
  /** Takes the identify hits of each batch (the identification queue). */
  enqueueIdentifies(hits: IdentifyHit[]): Promise<void>
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

/** What identification needs of an identify hit (the queue keeps no more). */
const identifyHitOf = (row: PageViewRow): IdentifyHit => ({
  organization_id: row.organization_id,
  visitor_id: row.visitor_id,
  session_id: row.session_id,
  email: row.email,
  timestamp: row.timestamp,
  company_id: row.company_id,
})

/** Builds the `afterWrite` step of the durable sink. Idempotent: a replayed batch rewrites the same rows. */
export function createIdentityWriter(options: IdentityWriterOptions): IdentityWriter {
  const knownCompanies = new Set<string>()
  const waiting = new Map<string, CompanyRow>()
  let timer: NodeJS.Timeout | undefined

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
      const identifies: IdentifyHit[] = []
      for (const row of rows) {
        if (row.type === 'identify' && row.email) identifies.push(identifyHitOf(row))
        if (
          /^(?:as\d+$|dns:)/.test(row.company_id) &&
          !knownCompanies.has(row.company_id) &&
          !waiting.has(row.company_id)
        ) {
          waiting.set(row.company_id, derivedCompany(row))
        }
      }
      await options.enqueueIdentifies(identifies)
      schedule()
    },
    async close() {
      if (timer) clearTimeout(timer)
      await writeCompanies()
    },
  }
}
