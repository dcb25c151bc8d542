// A list's ads platform and last audience sync, as words (audience-sync-words.ts) in a small
// definition list; a tone colours words that already say the state.
import { Fragment } from 'preact'
import {
  connectionWords,
  type ListSync,
  type Platform,
  type SyncFact,
  syncFacts,
} from '../audience-sync-words.js'

const toneClass: Record<NonNullable<SyncFact['tone']>, string | undefined> = {
  ok: 'valid',
  pending: undefined,
  problem: 'error-text',
}

export function AudienceSyncSummary({ list, platforms }: { list: ListSync; platforms: readonly Platform[] }) {
  const facts = syncFacts(list, platforms)
  const connected = list.connectedIntegration ?? list.lastAudienceSync
  return (
    <div class="audience-sync">
      <p class={connected ? undefined : 'muted'}>{connectionWords(list, platforms)}</p>
      {facts.length > 0 ? (
        <dl class="sync-facts">
          {facts.map((fact, index) => (
            // Facts have no id of their own; their order is fixed for a given outcome.
            <Fragment key={index}>
              <dt>{fact.term}</dt>
              <dd class={fact.tone && toneClass[fact.tone]}>{fact.text}</dd>
            </Fragment>
          ))}
        </dl>
      ) : null}
    </div>
  )
}
