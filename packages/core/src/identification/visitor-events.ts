// Visitor events with the whole identification payload (spec section "Events"): `visitor.identified`
// when identification first knows a visitor, `visitor.phone_revealed` when a phone search finds
// its phone. One read of the visitors' timelines and one of their companies for all of them.

import { type CompanyRow, companiesTable } from '../companies/rows.js'
import { eventIdOf, type StoredEvent } from '../events/events.js'
import { organizationIcpConfigs } from '../icp/configs.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import type { VisitorRow } from '../visitor-tracking/rows.js'
import { getVisitorProfiles } from '../visitor-tracking/visitors.js'
import { type IdentificationEventType, identificationPayload } from './payload.js'

const companyColumns = Object.keys(companiesTable.columns).join(', ')

export interface VisitorEventSubject {
  /** The visitor row as the event shows it (its `phone` is never read). */
  visitor: VisitorRow
  /** `visitor.phone_revealed`: the phone the organization's search found. */
  revealedPhone?: string | undefined
  /** The session the event belongs to; unset: the visitor's latest session. */
  sessionId?: string | undefined
  timestamp: string
}

/**
 * The events of one type for visitors of one organization. Each event's id is made from its type
 * and visitor, so an event written twice is stored once.
 * @example await appendEvents(store, await visitorEvents(deps, organization, 'visitor.identified', subjects))
 */
export async function visitorEvents(
  deps: { store: Store; repos: Repositories },
  organization: { id: string; name: string },
  type: IdentificationEventType,
  subjects: readonly VisitorEventSubject[],
): Promise<StoredEvent[]> {
  if (subjects.length === 0) return []
  const [pixelConfig, icpConfigs] = await Promise.all([
    deps.repos.pixelConfigs.get({ organization_id: organization.id }),
    organizationIcpConfigs(deps.repos, organization.id),
  ])
  const ipTracking = pixelConfig?.ip_tracking ?? false
  const companyIds = [...new Set(subjects.map(({ visitor }) => visitor.company_id).filter(Boolean))]
  const companies = new Map(
    companyIds.length === 0
      ? []
      : (
          await deps.store.query<CompanyRow>(
            `SELECT ${companyColumns} FROM companies FINAL WHERE id IN {ids:Array(String)}`,
            { ids: companyIds },
          )
        ).map((company) => [company.id, company]),
  )
  // Only the events' sessions when every subject names one (the rest of a timeline is not in the
  // payload); the latest session otherwise.
  const sessionIds = subjects.map(({ sessionId }) => sessionId).filter((id) => id !== undefined)
  const profiles = await getVisitorProfiles(
    deps.store,
    organization.id,
    subjects.map(({ visitor }) => visitor.id),
    {
      ipTracking,
      icpConfigs,
      ...(sessionIds.length === subjects.length ? { sessionIds } : {}),
    },
  )
  return subjects.map(({ visitor, revealedPhone, sessionId, timestamp }) => {
    const profile = profiles.get(visitor.id)
    const session = profile?.sessions.find((s) => s.id === sessionId) ?? profile?.sessions[0]
    const payload = identificationPayload({
      eventType: type,
      timestamp,
      organization,
      ipTracking,
      visitor,
      revealedPhone,
      icp: {
        icp: profile?.icp ?? false,
        icpStatuses: profile?.icpStatuses ?? {},
        personaMatch: profile?.personaMatch ?? false,
      },
      company: companies.get(visitor.company_id),
      session,
      // The visitor's first session started when the visitor was first seen.
      firstVisit: !session || Date.parse(session.startedAt) <= Date.parse(visitor.first_seen_at),
      pageViews: (profile?.pageViews ?? [])
        .filter((view) => !session || view.sessionId === session.id)
        .map((view) => ({ url: view.url, visitedAt: view.visitedAt }))
        .reverse(),
    })
    return {
      event_id: eventIdOf(type, organization.id, visitor.id),
      type,
      organization_id: organization.id,
      visitor_id: visitor.id,
      payload: JSON.stringify(payload),
      created_at: timestamp,
    }
  })
}
