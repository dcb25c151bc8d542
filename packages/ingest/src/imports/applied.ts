// An import applies as soon as it finishes: the process that ran it reloads what it holds in memory,
// and tells every other process through pubsub (Redis when REDIS_URL is set) so they reload too.
// The periodic reload (COMPANY_IPS_REFRESH_MS) stays as the safety net for a lost message.
import type { PubSub } from '@visitor-id/core/coordination'
import type { ImportKind } from './report.js'

/** The pubsub channel on which a finished import is announced (message: `<origin> <kind>`). */
export const importsAppliedChannel = 'imports:applied'

const kinds: ReadonlySet<string> = new Set<ImportKind>(['company-ips', 'companies', 'contacts'])

/**
 * Announces a finished import to every process; `origin` names the announcing process, which has
 * reloaded already and ignores its own message ('' for a process that holds nothing: the CLI).
 * @example await announceImportApplied(coordination.pubsub, 'company-ips')
 */
export function announceImportApplied(pubsub: PubSub, kind: ImportKind, origin = ''): Promise<void> {
  return pubsub.publish(importsAppliedChannel, `${origin} ${kind}`)
}

/**
 * Calls `apply` with the kind of every import another process announces (not those of `origin`).
 * @example const stop = await onImportApplied(pubsub, origin, (kind) => reload(kind))
 */
export function onImportApplied(
  pubsub: PubSub,
  origin: string,
  apply: (kind: ImportKind) => void,
): Promise<() => Promise<void>> {
  return pubsub.subscribe(importsAppliedChannel, (message) => {
    const [from, kind] = message.split(' ')
    if (from !== origin && kind !== undefined && kinds.has(kind)) apply(kind as ImportKind)
  })
}
