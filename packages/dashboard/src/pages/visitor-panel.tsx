// One visitor's profile in a modal dialog: contact, company, ICP statuses, sessions (geo, device,
// UTMs), page views, and the phone search (phone-search.tsx).
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type Session } from '../api.js'
import { Show, useLoad } from '../components/ui.js'
import { formatDateTime, formatDuration, personName } from '../format.js'
import type { VisitorProfile } from '../types.js'
import { PhoneSearch } from './phone-search.js'

/** Page views shown before "Show all". */
const firstViews = 20

function Facts({ rows }: { rows: [string, string | null | undefined][] }) {
  const shown = rows.filter(([, value]) => value)
  if (shown.length === 0) return <p class="muted">Nothing known.</p>
  return (
    <dl class="facts">
      {shown.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  )
}

const place = (...parts: (string | null | undefined)[]) => parts.filter(Boolean).join(', ')

function ContactSection({ contact }: { contact: VisitorProfile['contact'] }) {
  return (
    <section aria-labelledby="contact-title">
      <h3 id="contact-title">Contact</h3>
      {contact ? (
        <Facts
          rows={[
            ['Email', contact.email],
            ['Job title', contact.jobTitle],
            ['Seniority', contact.seniority],
            ['Department', contact.department],
            ['Location', place(contact.city, contact.state, contact.country)],
            ['LinkedIn', contact.linkedinUrl],
          ]}
        />
      ) : (
        <p class="muted">Not identified yet.</p>
      )}
    </section>
  )
}

function CompanySection({ company }: { company: VisitorProfile['company'] }) {
  return (
    <section aria-labelledby="company-title">
      <h3 id="company-title">Company</h3>
      {company ? (
        <Facts
          rows={[
            ['Name', company.name],
            ['Domain', company.domain],
            ['Industry', company.industry],
            ['Employees', company.employeeSizeRange],
            ['Revenue', company.revenueRange],
            ['Location', place(company.city, company.region, company.country)],
          ]}
        />
      ) : (
        <p class="muted">No company known for this visitor.</p>
      )}
    </section>
  )
}

function IcpSection({ profile }: { profile: VisitorProfile }) {
  return (
    <section aria-labelledby="icp-title">
      <h3 id="icp-title">ICP</h3>
      <p>
        {profile.icp ? 'Matches an ICP config' : 'Matches no ICP config'};{' '}
        {profile.personaMatch ? 'persona matched' : 'persona not matched'}
      </p>
      {Object.keys(profile.icpStatuses).length ? (
        <ul class="statuses">
          {Object.entries(profile.icpStatuses).map(([slug, matched]) => (
            <li key={slug}>
              <code>{slug}</code>: {matched ? 'match' : 'no match'}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  )
}

/** One session: when and how long, where from and on what, how it came in. */
function SessionItem({ visit }: { visit: VisitorProfile['sessions'][number] }) {
  return (
    <li>
      <strong>{formatDateTime(visit.startedAt)}</strong>, {formatDuration(visit.sessionDurationSeconds)},{' '}
      {visit.pageViewCount} pages
      <br />
      <span class="muted">
        {place(visit.city, visit.region, visit.country) || 'Unknown place'} ·{' '}
        {place(visit.deviceType, visit.browser, visit.os)}
        {visit.isHosting ? ' · hosting network' : ''}
        {visit.isAnonymous ? ' · anonymizer' : ''}
      </span>
      <br />
      <span class="muted">
        Entry {visit.entryPage || '–'}
        {visit.referrer ? ` · from ${visit.referrer}` : ''}
        {visit.utmSource
          ? ` · UTM ${[visit.utmSource, visit.utmMedium, visit.utmCampaign, visit.utmTerm, visit.utmContent]
              .filter(Boolean)
              .join(' / ')}`
          : ''}
      </span>
    </li>
  )
}

function SessionsSection({ sessions }: { sessions: VisitorProfile['sessions'] }) {
  return (
    <section aria-labelledby="sessions-title">
      <h3 id="sessions-title">Sessions ({sessions.length})</h3>
      <ul class="sessions">
        {sessions.map((visit) => (
          <SessionItem key={visit.id} visit={visit} />
        ))}
      </ul>
    </section>
  )
}

function PageViewsSection(props: {
  views: VisitorProfile['pageViews']
  showAll: boolean
  onShowAll: () => void
}) {
  const { views, showAll } = props
  return (
    <section aria-labelledby="views-title">
      <h3 id="views-title">Page views ({views.length})</h3>
      <ul class="views">
        {(showAll ? views : views.slice(0, firstViews)).map((view, index) => (
          <li key={`${view.visitedAt}-${index}`}>
            <span class="muted">{formatDateTime(view.visitedAt)}</span> {view.title || view.url}{' '}
            <span class="muted">{view.title ? view.url : ''}</span>
          </li>
        ))}
      </ul>
      {views.length > firstViews && !showAll ? (
        <button type="button" class="secondary" onClick={props.onShowAll}>
          Show all {views.length}
        </button>
      ) : null}
    </section>
  )
}

export function VisitorPanel(props: { session: Session; visitorId: string; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [showAllViews, setShowAllViews] = useState(false)
  const loaded = useLoad(
    (signal) =>
      api(props.session).get('/visitor-tracking/{organizationId}/visitors/{visitorId}', {
        params: { path: { organizationId: props.session.organizationId, visitorId: props.visitorId } },
        signal,
      }),
    [props.visitorId],
  )
  useEffect(() => {
    const element = dialog.current!
    if (!element.open) element.showModal()
    return () => element.close()
  }, [])
  return (
    <dialog ref={dialog} class="panel" aria-labelledby="panel-title" onClose={props.onClose}>
      <div class="panel-head">
        <h2 id="panel-title">{loaded.data ? personName(loaded.data.contact ?? {}) : 'Visitor'}</h2>
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
      <Show loaded={loaded}>
        {(profile) => (
          <div class="panel-body">
            <p class="muted">
              First seen {formatDateTime(profile.firstSeenAt)}, last seen {formatDateTime(profile.lastSeenAt)}
            </p>
            <ContactSection contact={profile.contact} />
            <CompanySection company={profile.company} />
            <IcpSection profile={profile} />
            <PhoneSearch session={props.session} profile={profile} reload={loaded.reload} />
            <SessionsSection sessions={profile.sessions} />
            <PageViewsSection
              views={profile.pageViews}
              showAll={showAllViews}
              onShowAll={() => setShowAllViews(true)}
            />
          </div>
        )}
      </Show>
    </dialog>
  )
}
