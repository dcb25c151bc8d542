// The phone search of the profile panel. A B2B organization's profile says how its latest search
// stands (`phoneNumberSearchStatus`); a start answers `ongoing`, or a 409 naming why not (its
// message is shown), and while a search runs the profile is read again until it ends.
import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, type Session } from '../api.js'
import { ErrorMessage, useAction, useLoad } from '../components/ui.js'
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

/** What a start of the search answered: its status, and the 409's message when it was refused. */
interface Started {
  status: string
  message?: string
}

/**
 * Where the visitor's search stands (the profile's status, or what a start answered until the
 * profile, read again, shows the end), the start action, and the polling while it runs.
 */
function usePhoneSearch(session: Session, profile: VisitorProfile, reload: () => void) {
  const [started, setStarted] = useState<Started>()
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
      reload()
    }, pollMs)
    return () => clearTimeout(timer)
  }, [polling, polls])
  return { search, started, status, polling }
}

/** The sentence under the number: where the search stands, empty when found or never started. */
function statusSentence(status: string | undefined, polling: boolean, started: Started | undefined): string {
  if (!status || status === 'found') return ''
  if (status === 'ongoing' && !polling)
    return 'No number yet: the search may still run, or have found none. Search again to know.'
  return (status === started?.status ? started?.message : undefined) ?? statusText[status] ?? status
}

export function PhoneSearch(props: { session: Session; profile: VisitorProfile; reload: () => void }) {
  const { session, profile } = props
  const organization = useLoad(
    (signal) =>
      api(session).get('/organization/{organizationId}', {
        params: { path: { organizationId: session.organizationId } },
        signal,
      }),
    [],
  )
  const { search, started, status, polling } = usePhoneSearch(session, profile, props.reload)
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
        {statusSentence(status, polling, started)}
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
