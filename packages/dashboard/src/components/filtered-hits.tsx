// The overview's filtered traffic: the hits ingest dropped in the range (never visitors), the bots
// first, then every reason. The server counts them per UTC day (the totals' `filtered`).
import { formatNumber } from '../format.js'
import type { Totals } from '../types.js'

type Filtered = Totals['filtered']
type Reason = keyof Filtered['byReason']

/** Each reason as the list shows it, in this order. */
const reasons: { reason: Reason; label: string }[] = [
  { reason: 'bot', label: 'Known bots and crawlers' },
  { reason: 'automation', label: 'Automation (headless browsers, webdriver)' },
  { reason: 'origin', label: 'Disallowed origin' },
  { reason: 'privacy', label: 'Privacy signal (GPC, DNT)' },
  { reason: 'invalid', label: 'Identify without an email' },
  { reason: 'consent', label: 'Identify without consent' },
  { reason: 'company_only', label: 'Identify in a company-only country' },
]

const botHits = (filtered: Filtered) => filtered.byReason.bot + filtered.byReason.automation

export function FilteredHits(props: { current: Filtered; previous: Filtered }) {
  const { current, previous } = props
  return (
    <section class="card" aria-labelledby="filtered-title" data-filtered>
      <h2 id="filtered-title">
        <span class="num" data-filtered-bots>
          {formatNumber(botHits(current))}
        </span>{' '}
        bot hits filtered
      </h2>
      <p class="hint">
        {formatNumber(current.total)} hits filtered in all ({formatNumber(previous.total)} in the previous
        period), none of them counted as a visitor; counted per day (UTC).
      </p>
      <ul class="ranked">
        {reasons.map(({ reason, label }) => (
          <li key={reason} data-reason={reason}>
            <span>{label}</span>
            <span class="num">{formatNumber(current.byReason[reason])}</span>
          </li>
        ))}
      </ul>
    </section>
  )
}
