// Dataset imports behind `npm run cli -- import company-ips FILE`, `import companies FILE` and
// `import contacts FILE` (contacts.ts):
// read CSV or JSONL, validate every row, write good rows in batches, report rejected rows with
// their line numbers.
import { nextVersion } from '@visitor-id/core/ids'
import { renderStatement } from '@visitor-id/core/store'
import type { z } from 'zod'
import { type RecordResult, readRecords } from './read-records.js'
import type { ImportKind, ImportOptions, ImportReport } from './report.js'
import { companyIpSchema, companySchema, normalizeCompany, normalizeCompanyIp } from './schemas.js'

export { importContacts } from './contacts.js'
export type {
  ImportKind,
  ImportOptions,
  ImportProgress,
  ImportReport,
  RejectedRow,
} from './report.js'

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ')
}

async function runImport<S extends z.ZodType>(
  kind: ImportKind,
  table: string,
  schema: S,
  normalize: (record: Record<string, string>) => unknown,
  options: ImportOptions,
): Promise<ImportReport> {
  const batchSize = options.batchSize ?? 5000
  const report: ImportReport = { kind, file: options.file, read: 0, imported: 0, rejected: 0, rejects: [] }
  let batch: object[] = []
  const flush = async () => {
    if (batch.length === 0) return
    await options.store.insert(table, batch)
    report.imported += batch.length
    batch = []
  }
  const now = new Date().toISOString()
  const bytes = { read: 0, total: 0 }
  const progress = () =>
    options.onProgress?.({
      bytesRead: bytes.read,
      totalBytes: bytes.total,
      rowsRead: report.read,
      accepted: report.imported + batch.length,
      rejected: report.rejects.length,
    })
  const records = readRecords(options.file, {
    onBytes: (read, total) => {
      bytes.read = read
      bytes.total = total
    },
  })
  /** Validates a row into the batch; the reason when it is rejected. */
  const accept = (item: RecordResult): string | undefined => {
    if ('error' in item) return item.error
    const parsed = schema.safeParse(normalize(item.record))
    if (!parsed.success) return describeIssues(parsed.error)
    batch.push({
      ...(parsed.data as object),
      created_at: now,
      updated_at: now,
      version: nextVersion(),
      is_deleted: 0,
    })
    return undefined
  }
  for await (const item of records) {
    report.read += 1
    const reason = accept(item)
    if (reason !== undefined) report.rejects.push({ line: item.line, reason })
    else if (batch.length >= batchSize) await flush()
    progress()
  }
  await flush()
  report.rejected = report.rejects.length
  progress()
  return report
}

/**
 * Imports company IP ranges (`cidr` or `start_ip`+`end_ip`, and `company_id`).
 * @example await importCompanyIps({ store, file: 'ranges.csv', replace: true })
 */
export async function importCompanyIps(options: ImportOptions): Promise<ImportReport> {
  if (options.replace) {
    const sql = renderStatement('TRUNCATE TABLE IF EXISTS company_ip_ranges {{on_cluster}}', {
      database: options.store.database,
      cluster: options.store.cluster,
    })
    if (sql) await options.store.command(sql)
  }
  return runImport('company-ips', 'company_ip_ranges', companyIpSchema, normalizeCompanyIp, options)
}

/**
 * Imports companies (`id`, `name`, and optional profile fields); a row with a known id replaces it.
 * @example await importCompanies({ store, file: 'companies.jsonl' })
 */
export async function importCompanies(options: ImportOptions): Promise<ImportReport> {
  return runImport('companies', 'companies', companySchema, normalizeCompany, options)
}
