// One visitor's profile in a modal dialog: contact, company, ICP statuses, sessions (geo, device,
// UTMs), page views, and the phone search with its state and credit cost.
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, api, type Session } from '../api.js'
import { ErrorMessage, Show, useAction, useLoad } from '../components/ui.js'
import { formatDateTime, formatDuration, personName } from '../format.js'
import type { VisitorProfile } from '../types.js'

/** Credits a phone search reserves, charged only when a phone is found (see /docs). */
export const phoneSearchCredits = 5

type SearchStatus = NonNullable<VisitorProfile['phoneNumberSearchStatus']>

const statusText: Record<string, string> = {
  ongoing: 'Searching… the number shows here once found',
  found: 'Found',
  not_found: 'No phone found; a search that found none is not retried',
  error: 'The search failed; you may retry once',
  expired: 'No answer in time; you may retry once',
} satisfies Record<Exclude<SearchStatus, 'not_started'>, string>

const conflictStatus: Record<string, string> = {
  search_ongoing: 'ongoing',
  not_found: 'not_found',
  retry_exhausted: 'error',
  already_unlocked: 'found',
}

/** How often, and how many times, the profile is read again while a search runs. */
const pollMs = 2000
const pollTimes = 15

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

/**
 * The phone search. A B2B organization's profile says how its latest search stands
 * (`phoneNumberSearchStatus`); a start answers `ongoing`, or a 409 naming why not (its message is
 * shown), and while a search runs the profile is read again until it ends.
 */
function PhoneSearch(props: { session: Session; profile: VisitorProfile; reload: () => void }) {
  const { session, profile } = props
  const organization = useLoad(
    (signal) =>
      api(session).get('/organization/{organizationId}', {
        params: { path: { organizationId: session.organizationId } },
        signal,
      }),
    [],
  )
  const [started, setStarted] = useState<{ status: string; message?: string }>()
  const [polls, setPolls] = useState(0)
  const search = useAction(async () => {
    try {
      const answer = await api(session).post('/visitor-tracking/phone-number-search', {
        body: { organizationId: session.organizationId, visitorId: profile.id },
      })
      setStarted({ status: answer.phoneNumberSearchStatus })
      setPolls(0)
    } catch (error) {
      // 409: an earlier search decides; its code says how it stands.
      const known = error instanceof ApiError && error.status === 409 ? conflictStatus[error.code] : undefined
      if (known) {
        setStarted({ status: known, message: (error as ApiError).message })
        return
      }
      throw error
    }
  })
  const shown =
    profile.phoneNumberSearchStatus === 'not_started' ? undefined : profile.phoneNumberSearchStatus
  // After a start, the profile decides once read again (polls > 0): it shows the search's end.
  const status = profile.phoneNumber
    ? 'found'
    : started && (polls === 0 || shown === undefined || shown === 'ongoing')
      ? started.status
      : shown
  const polling = status === 'ongoing' && polls < pollTimes
  useEffect(() => {
    if (!polling) return
    const timer = setTimeout(() => {
      setPolls((n) => n + 1)
      props.reload()
    }, pollMs)
    return () => clearTimeout(timer)
  }, [polling, polls])
  const b2b = organization.data?.productType === 'plus_employee'
  const blocked = !b2b
    ? 'Phone search needs a B2B plan.'
    : !profile.contact?.linkedinUrl
      ? 'Phone search needs the visitor’s LinkedIn profile.'
      : undefined
  return (
    <section aria-labelledby="phone-title">
      <h3 id="phone-title">Phone number</h3>
      {profile.phoneNumber ? (
        <p>
          <strong>{profile.phoneNumber}</strong>
        </p>
      ) : null}
      <p class="status" data-status={status ?? 'unknown'} aria-live="polite">
        {status && status !== 'found'
          ? status === 'ongoing' && !polling
            ? 'No number yet: the search may still run, or have found none. Search again to know.'
            : ((status === started?.status ? started?.message : undefined) ?? statusText[status] ?? status)
          : ''}
      </p>
      {!profile.phoneNumber ? (
        <>
          <button
            type="button"
            disabled={search.busy || polling || Boolean(blocked)}
            onClick={() => search.run()}
          >
            {search.busy ? 'Starting…' : status ? 'Search again' : 'Search phone number'}
          </button>{' '}
          <span class="hint">
            Costs {phoneSearchCredits} credits, charged only if a number is found
            {organization.data ? ` (balance: ${organization.data.identificationCredits})` : ''}.
          </span>
          {blocked && organization.data ? <p class="hint">{blocked}</p> : null}
        </>
      ) : null}
      <ErrorMessage error={search.error} />
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
            <section aria-labelledby="contact-title">
              <h3 id="contact-title">Contact</h3>
              {profile.contact ? (
                <Facts
                  rows={[
                    ['Email', profile.contact.email],
                    ['Job title', profile.contact.jobTitle],
                    ['Seniority', profile.contact.seniority],
                    ['Department', profile.contact.department],
                    [
                      'Location',
                      [profile.contact.city, profile.contact.state, profile.contact.country]
                        .filter(Boolean)
                        .join(', '),
                    ],
                    ['LinkedIn', profile.contact.linkedinUrl],
                  ]}
                />
              ) : (
                <p class="muted">Not identified yet.</p>
              )}
            </section>
            <section aria-labelledby="company-title">
              <h3 id="company-title">Company</h3>
              {profile.company ? (
                <Facts
                  rows={[
                    ['Name', profile.company.name],
                    ['Domain', profile.company.domain],
                    ['Industry', profile.company.industry],
                    ['Employees', profile.company.employeeSizeRange],
                    ['Revenue', profile.company.revenueRange],
                    [
                      'Location',
                      [profile.company.city, profile.company.region, profile.company.country]
                        .filter(Boolean)
                        .join(', '),
                    ],
                  ]}
                />
              ) : (
                <p class="muted">No company known for this visitor.</p>
              )}
            </section>
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
            <PhoneSearch session={props.session} profile={profile} reload={loaded.reload} />
            <section aria-labelledby="sessions-title">
              <h3 id="sessions-title">Sessions ({profile.sessions.length})</h3>
              <ul class="sessions">
                {profile.sessions.map((visit) => (
                  <li key={visit.id}>
                    <strong>{formatDateTime(visit.startedAt)}</strong>,{' '}
                    {formatDuration(visit.sessionDurationSeconds)}, {visit.pageViewCount} pages
                    <br />
                    <span class="muted">
                      {[visit.city, visit.region, visit.country].filter(Boolean).join(', ') ||
                        'Unknown place'}{' '}
                      · {[visit.deviceType, visit.browser, visit.os].filter(Boolean).join(', ')}
                      {visit.isHosting ? ' · hosting network' : ''}
                      {visit.isAnonymous ? ' · anonymizer' : ''}
                    </span>
                    <br />
                    <span class="muted">
                      Entry {visit.entryPage || '–'}
                      {visit.referrer ? ` · from ${visit.referrer}` : ''}
                      {visit.utmSource
                        ? ` · UTM ${[
                            visit.utmSource,
                            visit.utmMedium,
                            visit.utmCampaign,
                            visit.utmTerm,
                            visit.utmContent,
                          ]
                            .filter(Boolean)
                            .join(' / ')}`
                        : ''}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
            <section aria-labelledby="views-title">
              <h3 id="views-title">Page views ({profile.pageViews.length})</h3>
              <ul class="views">
                {(showAllViews ? profile.pageViews : profile.pageViews.slice(0, 20)).map((view, index) => (
                  <li key={`${view.visitedAt}-${index}`}>
                    <span class="muted">{formatDateTime(view.visitedAt)}</span> {view.title || view.url}{' '}
                    <span class="muted">{view.title ? view.url : ''}</span>
                  </li>
                ))}
              </ul>
              {profile.pageViews.length > 20 && !showAllViews ? (
                <button type="button" class="secondary" onClick={() => setShowAllViews(true)}>
                  Show all {profile.pageViews.length}
                </button>
              ) : null}
            </section>
          </div>
        )}
      </Show>
    </dialog>
  )
}
