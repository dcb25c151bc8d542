// Imported companies by domain, for the company of a reverse DNS name: held in memory like the
// company IP ranges and reloaded with them (when an import finishes, and periodically).
import type { Store } from '@visitor-id/core/store'
import { getDomain } from 'tldts'

export interface CompanyDomains {
  /** The imported company with this domain, else one whose domain is a subdomain of it. */
  get(domain: string): string | undefined
  readonly size: number
  /** Reads every company domain again; the old index serves until the new one is ready. */
  reload(): Promise<number>
}

/** The id of the company named by a domain that no imported company has: `dns:<domain>`. */
export const dnsCompanyId = (domain: string) => `dns:${domain}`

/**
 * Loads the domain -> company index of the store's imported companies (derived `dns:` companies
 * are left out: they are what a domain falls back to anyway).
 * @example const domains = await loadCompanyDomains(store); domains.get('acme.co.uk') // 'c-42'
 */
export async function loadCompanyDomains(store: Store): Promise<CompanyDomains> {
  let index = new Map<string, string>()
  const reload = async () => {
    const rows = await store.query<{ domain: string; id: string }>(
      `SELECT domain, id FROM companies FINAL WHERE domain != '' AND source != 'dns' ORDER BY id`,
    )
    const next = new Map<string, string>()
    // Several companies with one domain: the first id wins, so the answer does not change by reload.
    for (const row of rows) if (!next.has(row.domain)) next.set(row.domain, row.id)
    // A company imported with `uk.acme.com` also answers for `acme.com` when no company has that.
    for (const row of rows) {
      const registered = getDomain(row.domain)
      if (registered && registered !== row.domain && !next.has(registered)) next.set(registered, row.id)
    }
    index = next
    return index.size
  }
  await reload()
  return {
    get: (domain) => index.get(domain),
    get size() {
      return index.size
    },
    reload,
  }
}
