// What an ingest process holds from imports, kept current: an import finished here is applied at
// once and announced to the other processes; theirs are applied when announced; and a periodic
// reload of the company data is the safety net for an announcement lost (imports/applied.ts).
import { randomUUID } from 'node:crypto'
import type { PubSub } from '@visitor-id/core/coordination'
import type { IdentifiedVisitors } from '@visitor-id/core/identification'
import type { LogLike } from './durable-sink.js'
import { announceImportApplied, onImportApplied } from './imports/applied.js'
import type { ImportKind } from './imports/index.js'
import type { IpIntelligence } from './ip/ip-intelligence.js'

export interface ImportReloadsOptions {
  ipIntelligence: IpIntelligence
  identified: IdentifiedVisitors
  /** Where finished imports are announced and heard; unset: this process only. */
  pubsub: PubSub | undefined
  /** How often company ranges and domains are reloaded whatever was announced. */
  refreshMs: number
  /** The process's logger once it has started (none before). */
  logs: { current?: LogLike }
}

export interface ImportReloads {
  /** Applies an import of `kind` finished in this process, then announces it to the others. */
  importFinished(kind: ImportKind): Promise<void>
  /** Listens for the other processes' imports and starts the periodic reload. */
  start(logger: LogLike): Promise<void>
  /** Stops both. */
  stop(): Promise<void>
}

/**
 * Builds the import reloads of one process.
 * @example const imports = createImportReloads({ ipIntelligence, identified, pubsub, refreshMs, logs })
 */
export function createImportReloads(options: ImportReloadsOptions): ImportReloads {
  const { ipIntelligence, identified, pubsub, logs } = options
  let refresh: NodeJS.Timeout | undefined
  let stopListening: (() => Promise<void>) | undefined
  // Names this process in its announcements, so it does not reload twice on its own import.
  const origin = randomUUID()
  /** Reloads the in-memory data an import of `kind` feeds. */
  const applyImport = async (kind: ImportKind) => {
    // Contacts are read from the store at identification; only the visitors remembered as having
    // none must look again. Company ranges and company domains (reverse DNS) are held in memory.
    if (kind === 'contacts') identified.forgetUnmatched()
    else await ipIntelligence.reloadCompanies()
  }
  return {
    async importFinished(kind) {
      // The import is stored: a failed reload is logged, and the periodic one applies it later.
      await applyImport(kind).catch((error: unknown) => {
        logs.current?.warn({ err: error, kind }, 'ingest: import stored but not applied yet')
      })
      if (!pubsub) return
      // Not announced: the others apply it at their next periodic reload.
      await announceImportApplied(pubsub, kind, origin).catch((error: unknown) => {
        logs.current?.warn({ err: error, kind }, 'ingest: import not announced to the other processes')
      })
    },
    async start(logger) {
      if (pubsub) {
        stopListening = await onImportApplied(pubsub, origin, (kind) => {
          applyImport(kind).catch((error: unknown) => {
            logger.warn({ err: error, kind }, 'ingest: an import of another process not applied yet')
          })
        })
      }
      // The safety net: an announcement lost (Redis down a moment) is applied at the next reload.
      refresh = setInterval(() => {
        ipIntelligence.reloadCompanies().catch((error: unknown) => {
          logger.warn({ err: error }, 'ingest: company ranges and domains not reloaded')
        })
      }, options.refreshMs)
      refresh.unref()
    },
    async stop() {
      if (refresh) clearInterval(refresh)
      await stopListening?.()
    },
  }
}
