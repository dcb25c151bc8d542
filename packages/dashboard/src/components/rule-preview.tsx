// A rule set tried on one visitor: its profile's facts (facts.ts) through icp-engine's evaluate.
import { type Evaluation, evaluate, type Rules } from '@visitor-id/icp-engine'
import { useState } from 'preact/hooks'
import { api, type Session } from '../api.js'
import { visitorFacts } from '../facts.js'
import { formatDateTime, personName, presetRange, rangeInstants } from '../format.js'
import { allFields } from '../types.js'
import { ErrorMessage, useLoad } from './ui.js'

export function RulePreview({ session, rules }: { session: Session; rules: Rules | undefined }) {
  const [visitorId, setVisitorId] = useState('')
  const visitors = useLoad(
    (signal) =>
      api(session)
        .get('/companies/visitors', {
          params: {
            query: {
              organizationId: session.organizationId,
              ...rangeInstants(presetRange('30d')),
              limit: 50,
            },
          },
          signal,
        })
        .then(allFields),
    [],
  )
  const profile = useLoad(
    (signal) =>
      visitorId
        ? api(session).get('/visitor-tracking/{organizationId}/visitors/{visitorId}', {
            params: { path: { organizationId: session.organizationId, visitorId } },
            signal,
          })
        : Promise.resolve(undefined),
    [visitorId],
  )
  let result: Evaluation | undefined
  if (rules && profile.data) result = evaluate(rules, visitorFacts(profile.data))
  return (
    <section class="preview" aria-labelledby="preview-title">
      <h3 id="preview-title">Preview against a visitor</h3>
      <label for="preview-visitor">Visitor</label>
      <select
        id="preview-visitor"
        value={visitorId}
        onChange={(e) => setVisitorId((e.target as HTMLSelectElement).value)}
      >
        <option value="">Choose a recent visitor…</option>
        {/* Identified visitors first: they have the most facts to try a rule on. */}
        {[...(visitors.data?.data ?? [])]
          .sort((a, b) => Number(Boolean(b.identifiedAt)) - Number(Boolean(a.identifiedAt)))
          .map((row) => (
            <option key={row.id} value={row.id}>
              {personName(row)}
              {row.company ? ` (${row.company.name})` : ''}, last seen {formatDateTime(row.lastSeenAt)}
            </option>
          ))}
      </select>
      <ErrorMessage error={visitors.error ?? profile.error} />
      {!rules ? (
        <p class="hint">Fix the rules above to see the result.</p>
      ) : result ? (
        <div aria-live="polite" data-preview={result.matched ? 'match' : 'no-match'}>
          <p>
            <strong>{result.matched ? 'Matches' : 'Does not match'}</strong>, score {result.score}
          </p>
          <ul>
            {result.groups.map((group, gi) => (
              <li key={gi}>
                Group {gi + 1}: {group.matched ? 'matched' : 'not matched'} (score {group.score});{' '}
                {group.conditions
                  .map(
                    (c) =>
                      `${c.type} ${c.comparator} ${c.passed ? 'passes' : 'fails'}${c.optional ? ' (optional)' : ''}`,
                  )
                  .join(', ')}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  )
}
