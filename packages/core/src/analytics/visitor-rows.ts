// A page of visitors as the API shows them: their figures next to their contacts, ICP results and
// companies' names.
import type { Store } from '../store/client.js'
import type { CompanyProfile } from './company-profiles.js'
import { iso, type StatisticsQuery } from './scope.js'

export interface VisitorStatistics {
  id: string
  email: string
  firstName: string
  lastName: string
  jobTitle: string
  company: { id: string; name: string; domain: string } | null
  sessions: number
  pageViews: number
  firstSeenAt: string
  lastSeenAt: string
  identifiedAt: string | null
  icp: boolean
  personaMatch: boolean
}

export interface VisitorFigures {
  visitor: string
  sessions: number
  page_views: number
  first_seen: string
  last_seen: string
  hit_company_id: string
}

interface VisitorDetails {
  contacts: [string, string, string, string, string, string, string | null][]
  scores: [string, string, number, number][]
}

/** Company profiles by id, for their names and domains. */
export type CompanyNames = ReadonlyMap<string, Pick<CompanyProfile, 'name' | 'domain'>>

/** The contacts and ICP results of a page of visitors. */
export interface PageDetails {
  contacts: Map<string, VisitorDetails['contacts'][number]>
  icp: Map<string, { icp: boolean; persona: boolean }>
}

/** Contacts and ICP results of a page of visitors, in one statement. */
export async function visitorDetails(
  store: Store,
  query: StatisticsQuery,
  ids: readonly string[],
): Promise<PageDetails> {
  const active = query.configs.filter((config) => config.is_active)
  const [details] = await store.query<VisitorDetails>(
    `SELECT
      (SELECT groupArray((toString(id), email, first_name, last_name, job_title, company_id, identified_at))
         FROM visitors FINAL WHERE organization_id = {organizationId:UUID} AND id IN {ids:Array(UUID)}) AS contacts,
      (SELECT groupArray((toString(visitor_id), config_id, matched, persona))
         FROM icp_scores FINAL
         WHERE organization_id = {organizationId:UUID} AND visitor_id IN {ids:Array(UUID)}
           AND config_id IN {configIds:Array(String)}) AS scores`,
    { organizationId: query.organizationId, ids, configIds: active.map((config) => config.id) },
  )
  const personaConfigs = new Set(active.filter((c) => c.kind === 'organization').map((c) => c.id))
  const icp = new Map<string, { icp: boolean; persona: boolean }>()
  for (const [visitor, configId, matched, persona] of details?.scores ?? []) {
    const entry = icp.get(visitor) ?? { icp: false, persona: false }
    entry.icp ||= Number(matched) === 1
    entry.persona ||= Number(persona) === 1 && personaConfigs.has(configId)
    icp.set(visitor, entry)
  }
  return { contacts: new Map((details?.contacts ?? []).map((contact) => [contact[0], contact])), icp }
}

/** A visitor's company: its contact's, else the one of its last hit with a company. */
export const visitorCompanyOf = (row: VisitorFigures, contacts: PageDetails['contacts']) =>
  contacts.get(row.visitor)?.[5] || row.hit_company_id

/**
 * A page of visitors as the API shows them: figures, contacts and ICP results, and the company (the
 * contact's, else the one of the visitor's last hit with a company) with its name and domain.
 */
export function visitorRows(
  figures: readonly VisitorFigures[],
  { contacts, icp }: PageDetails,
  profiles: CompanyNames,
): VisitorStatistics[] {
  return figures.map((row) => {
    const contact = contacts.get(row.visitor)
    const companyId = visitorCompanyOf(row, contacts)
    const profile = profiles.get(companyId)
    return {
      id: row.visitor,
      email: contact?.[1] ?? '',
      firstName: contact?.[2] ?? '',
      lastName: contact?.[3] ?? '',
      jobTitle: contact?.[4] ?? '',
      company: companyId
        ? { id: companyId, name: profile?.name || companyId, domain: profile?.domain ?? '' }
        : null,
      sessions: Number(row.sessions),
      pageViews: Number(row.page_views),
      firstSeenAt: iso(row.first_seen),
      lastSeenAt: iso(row.last_seen),
      identifiedAt: contact?.[6] ? iso(contact[6]) : null,
      icp: icp.get(row.visitor)?.icp ?? false,
      personaMatch: icp.get(row.visitor)?.persona ?? false,
    }
  })
}
