// What every import takes and reports, apart from the importers (index.ts, contacts.ts), so each
// importer depends on these shapes and none on another.
import type { Store } from '@visitor-id/core/store'

export type ImportKind = 'company-ips' | 'companies' | 'contacts'

export interface RejectedRow {
  line: number
  reason: string
}

/** Where an import stands; rows read = accepted + rejected. */
export interface ImportProgress {
  bytesRead: number
  totalBytes: number
  /** Data rows read so far (the CSV header and blank lines are not rows). */
  rowsRead: number
  /** Rows that passed validation (written, or in the batch being written). */
  accepted: number
  rejected: number
}

export interface ImportOptions {
  store: Store
  file: string
  /** Called after every row, and once more when the last batch is written (callers throttle). */
  onProgress?: (progress: ImportProgress) => void
  /** company-ips only: remove every existing range first. */
  replace?: boolean
  batchSize?: number
}

export interface ImportReport {
  kind: ImportKind
  file: string
  /** Data rows in the file: imported + rejected. */
  read: number
  imported: number
  rejected: number
  /** Every rejected row, in file order. */
  rejects: RejectedRow[]
}
