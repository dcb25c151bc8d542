/**
 * Renders migration SQL for one deployment shape. Migrations are written once with placeholders:
 *
 * - `{{on_cluster}}`: ` ON CLUSTER 'c'` on a cluster, nothing otherwise.
 * - `{{local:name}}`: a sharded event table's storage: `name_local` on a cluster, `name` otherwise.
 * - `{{sharded:Engine(args)}}`: engine of a sharded table: `ReplicatedEngine('/clickhouse/tables/{shard}/db/table', '{replica}', args)`.
 * - `{{global:Engine(args)}}`: engine of an entity table, one full copy on every node of the cluster.
 * - `{{distributed:name:shard_key}}`: a whole statement; on a cluster the Distributed table
 *   `name` over `name_local`, nothing otherwise.
 * - `{{distributed_alter:name:alteration}}`: a whole statement; on a cluster `ALTER TABLE name ON
 *   CLUSTER 'c' alteration` (the Distributed table follows a column added to `name_local`),
 *   nothing otherwise.
 *
 * Single-node output is plain ClickHouse SQL, the same for the embedded engine and a server.
 */
export interface DdlTarget {
  database: string
  cluster?: string | undefined
}

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

/** Splits a migration file into statements: each ends with `;` at the end of a line. */
export function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0)
}

function renderEngine(kind: 'sharded' | 'global', engine: string, table: string, target: DdlTarget): string {
  if (!target.cluster) return engine
  const match = /^(\w+)(?:\((.*)\))?$/s.exec(engine.trim())
  if (!match) throw new Error(`Cannot render engine "${engine}"`)
  const [, name, args] = match
  const zooPath =
    kind === 'sharded'
      ? `/clickhouse/tables/{shard}/${target.database}/${table}`
      : `/clickhouse/tables/all/${target.database}/${table}`
  const replicatedArgs = [quote(zooPath), quote('{replica}'), ...(args?.trim() ? [args.trim()] : [])]
  return `Replicated${name}(${replicatedArgs.join(', ')})`
}

/** Renders one statement; returns undefined when it renders to nothing (a single-node-only no-op). */
export function renderStatement(statement: string, target: DdlTarget): string | undefined {
  const distributed = /^\{\{distributed:(\w+):(.+)\}\}$/s.exec(statement.trim())
  if (distributed) {
    if (!target.cluster) return undefined
    const [, name, shardKey] = distributed
    const cluster = quote(target.cluster)
    return `CREATE TABLE IF NOT EXISTS ${name} ON CLUSTER ${cluster} AS ${name}_local ENGINE = Distributed(${cluster}, ${quote(target.database)}, ${quote(`${name}_local`)}, ${shardKey!.trim()})`
  }
  const alter = /^\{\{distributed_alter:(\w+):(.+)\}\}$/s.exec(statement.trim())
  if (alter) {
    if (!target.cluster) return undefined
    const [, name, alteration] = alter
    return `ALTER TABLE ${name} ON CLUSTER ${quote(target.cluster)} ${alteration!.trim()}`
  }
  let sql = statement
    .replace(/\{\{on_cluster\}\}/g, target.cluster ? ` ON CLUSTER ${quote(target.cluster)}` : '')
    .replace(/\{\{local:(\w+)\}\}/g, (_, name: string) => (target.cluster ? `${name}_local` : name))
  const table = /CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/i.exec(sql)?.[1] ?? 'unknown'
  sql = sql.replace(/\{\{(sharded|global):([^}]+)\}\}/g, (_, kind: 'sharded' | 'global', engine: string) =>
    renderEngine(kind, engine, table, target),
  )
  const leftover = /\{\{[^}]*\}\}/.exec(sql)
  if (leftover) throw new Error(`Unknown placeholder ${leftover[0]}`)
  return sql
}

/** Renders a whole migration file into the statements to run, in order. */
export function renderMigration(sql: string, target: DdlTarget): string[] {
  return splitStatements(sql).flatMap((statement) => renderStatement(statement, target) ?? [])
}
