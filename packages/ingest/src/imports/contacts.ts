// The contacts import (`npm run cli -- import contacts FILE`): the operator's people data, CSV or
// JSONL, every row validated by hand (no schema library on the hot path: a million rows must import
// in under a minute, bench/ingest/contacts-import.bench.mjs), written in large JSONCompactEachRow
// batches with the next batch parsed while the previous one is written. Each row is one contact
// with its keys: the engine computes the email hashes and the contact_keys rows (migration 0007)
// from the contacts insert itself, so a row is never written half.
import { type ContactField, contactFieldDefinitions, contactFields } from '@visitor-id/core/contact-fields'
import { normalizeEmail } from '@visitor-id/core/identification'
import { nextVersion } from '@visitor-id/core/ids'
import { normalizeDomain } from './domain.js'
import { type RawRecord, type RowResult, readRowBatches } from './read-records.js'
import type { ImportOptions, ImportReport } from './report.js'

/** What a file may carry of a contact: its identity, then its fields (core's contactFieldDefinitions). */
const columnDefinitions: readonly {
  column: 'id' | ContactField
  /** The longest value it may hold; a longer one rejects the row. */
  maxLength: number
  /** Other column names a file may use for it (column names are case-insensitive). */
  synonyms?: readonly string[]
}[] = [{ column: 'id', maxLength: 256, synonyms: ['contact_id'] }, ...contactFieldDefinitions]

/** The columns an import writes, in this order (the hashes and keys are the engine's). */
export const contactImportColumns = [
  'id',
  ...contactFields,
  'created_at',
  'updated_at',
  'version',
  'is_deleted',
] as const

const fields = columnDefinitions.map((definition) => definition.column)
const maxLengths = columnDefinitions.map((definition) => definition.maxLength)
const emailAt = fields.indexOf('email')
const personalEmailAt = fields.indexOf('personal_email')
const linkedinAt = fields.indexOf('linkedin_url')
const domainAt = fields.indexOf('company_domain')
const emailsAt = [emailAt, personalEmailAt] as const

/** The column names each field is read from, in order of preference. */
const sources: readonly (readonly string[])[] = columnDefinitions.map((definition) => [
  definition.column,
  ...(definition.synonyms ?? []),
])

// LinkedIn profile URLs as identities: no scheme, `www.`, query, fragment or trailing slash,
// lowercase, so `https://www.LinkedIn.com/in/jane/` and `linkedin.com/in/jane` are one contact.
const linkedinIdentity = (url: string) =>
  url
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/^www\./, '')
    .replace(/[?#].*$/s, '')
    .replace(/\/+$/, '')

/**
 * Checks and normalizes a row's field values (in `fields` order, trimmed) in place: lengths,
 * emails, the company domain, the identity. The values, or why the row is rejected.
 */
function checkContact(values: string[]): string[] | string {
  for (let i = 0; i < fields.length; i++) {
    const max = maxLengths[i]!
    if (values[i]!.length > max) return `${fields[i]}: longer than ${max} characters`
  }
  for (const at of emailsAt) {
    if (values[at] === '') continue
    const email = normalizeEmail(values[at]!)
    if (email === undefined) return `${fields[at]}: not an email address`
    values[at] = email
  }
  if (values[domainAt] !== '') {
    const domain = normalizeDomain(values[domainAt]!)
    if (domain === undefined) return 'company_domain: not a domain name such as example.com'
    values[domainAt] = domain
  }
  if (values[0] === '') {
    const linkedin = values[linkedinAt]!
    values[0] = values[emailAt] || values[personalEmailAt] || (linkedin ? linkedinIdentity(linkedin) : '')
    if (values[0] === '') return 'a contact needs an id, email, personal_email or linkedin_url'
  }
  return values
}

/**
 * One file row as the values of `contactImportColumns` (without the stamps: `extra` slots are left
 * for them at the end), or why it is rejected. Column names are lowercase, values trimmed.
 * @example toContactValues({ email: 'Jane@Acme.com' }) // ['jane@acme.com', 'jane@acme.com', '', ...]
 */
export function toContactValues(record: RawRecord, extra = 0): string[] | string {
  const values: string[] = new Array(fields.length + extra)
  for (let i = 0; i < fields.length; i++) {
    let text = ''
    for (const name of sources[i]!) {
      const candidate = record[name]
      if (candidate !== undefined && candidate !== '') {
        text = candidate
        break
      }
    }
    values[i] = text
  }
  return checkContact(values)
}

/** For a CSV header: the column index of each field, in order of preference (none: the field is ''). */
function columnPlan(header: readonly string[]): readonly (readonly number[])[] {
  return sources.map((names) => names.map((name) => header.indexOf(name)).filter((at) => at >= 0))
}

/** toContactValues for CSV cells, through the header's column plan (no record object per row). */
function cellsToContactValues(plan: readonly (readonly number[])[], cells: string[], extra: number) {
  const values: string[] = new Array(fields.length + extra)
  for (let i = 0; i < fields.length; i++) {
    let text = ''
    for (const at of plan[i]!) {
      const cell = cells[at]!
      if (cell !== '') {
        text = cell.trim()
        if (text !== '') break
      }
    }
    values[i] = text
  }
  return checkContact(values)
}

/** Slots a row's values leave after the fields: created_at, updated_at, version, is_deleted. */
const stampSlots = contactImportColumns.length - fields.length

/** Fills the stamp slots after a row's fields. */
function stampContact(values: string[], now: string) {
  const at = fields.length
  values[at] = now
  values[at + 1] = now
  values[at + 2] = nextVersion()
  values[at + 3] = '0' // is_deleted
}

/** A read row's contact values (stamp slots left empty), or why it is rejected. */
function contactValuesOf(row: RowResult, plan: readonly (readonly number[])[]): string[] | string {
  return 'cells' in row
    ? cellsToContactValues(plan, row.cells, stampSlots)
    : 'record' in row
      ? toContactValues(row.record, stampSlots)
      : row.error
}

/** The column plan of the latest CSV header, planned again only when the header changes. */
function createColumnPlanner() {
  let plan: readonly (readonly number[])[] = []
  let planned: readonly string[] | undefined
  return (header: readonly string[] | undefined) => {
    if (header && header !== planned) {
      planned = header
      plan = columnPlan(header)
    }
    return plan
  }
}

/**
 * The contacts inserts of an import, in batches of `batchSize` rows, counted in `report` once
 * written. One insert in flight while the next batch is parsed: the engine works on its own threads.
 */
function createContactInserts(store: ImportOptions['store'], report: ImportReport, batchSize: number) {
  let batch: string[][] = []
  let writing: Promise<void> = Promise.resolve()
  let failure: { error: unknown } | undefined
  /** Waits for the insert in flight (throwing its failure), then starts one of the batch. */
  const flush = async () => {
    await writing
    if (failure) throw failure.error
    if (batch.length === 0) return
    const rows = batch
    batch = []
    writing = store.insert('contacts', rows, { columns: contactImportColumns }).then(
      () => {
        report.imported += rows.length
      },
      (error: unknown) => {
        failure = { error }
      },
    )
  }
  return {
    /** Adds a row to the batch; true when the batch is full and is to be flushed. */
    add(values: string[]) {
      batch.push(values)
      return batch.length >= batchSize
    },
    flush,
    /** Writes the last batch and waits for it. */
    async finish() {
      await flush()
      await writing
      if (failure) throw failure.error
    },
  }
}

/**
 * Imports contacts (CSV or JSONL: `id`, `email`, `personal_email`, `first_name`, ...,
 * `company_id` or `company_domain`). A contact's identity is its `id`, else its email, else its
 * personal email, else its LinkedIn URL; a row with the identity of a stored contact replaces it.
 * Emails are stored trimmed and lowercased; a malformed one rejects the row.
 * @example await importContacts({ store, file: 'contacts.csv', onProgress: bar.update })
 */
export async function importContacts(options: ImportOptions): Promise<ImportReport> {
  const report: ImportReport = {
    kind: 'contacts',
    file: options.file,
    read: 0,
    imported: 0,
    rejected: 0,
    rejects: [],
  }
  const inserts = createContactInserts(options.store, report, options.batchSize ?? 50_000)
  const now = new Date().toISOString()
  const bytes = { read: 0, total: 0 }
  let accepted = 0
  const progress = () =>
    options.onProgress?.({
      bytesRead: bytes.read,
      totalBytes: bytes.total,
      rowsRead: report.read,
      accepted,
      rejected: report.rejects.length,
    })
  const planFor = createColumnPlanner()
  const batches = readRowBatches(options.file, {
    onBytes: (read, total) => {
      bytes.read = read
      bytes.total = total
    },
  })
  for await (const { header, rows } of batches) {
    const plan = planFor(header)
    for (const row of rows) {
      report.read += 1
      const values = contactValuesOf(row, plan)
      if (typeof values === 'string') report.rejects.push({ line: row.line, reason: values })
      else {
        stampContact(values, now)
        accepted += 1
        if (inserts.add(values)) await inserts.flush()
      }
      progress()
    }
  }
  await inserts.finish()
  // Counts and list refreshes read `contact_facets FINAL`, nearly free over one part and costly
  // over the several parts an import leaves (docs/decisions.md, "The read path"; migration 0011):
  // merge them now, once, rather than on every read (bench/lists/RESULTS.md).
  if (report.imported > 0) await options.store.command('OPTIMIZE TABLE contact_facets FINAL')
  report.rejected = report.rejects.length
  progress()
  return report
}
