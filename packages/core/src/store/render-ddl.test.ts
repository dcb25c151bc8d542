import { describe, expect, it } from 'vitest'
import { readMigrations } from './migrate.js'
import { renderMigration, renderStatement, splitStatements } from './render-ddl.js'

const single = { database: 'vid' }
const cluster = { database: 'vid', cluster: 'main' }

describe('splitStatements', () => {
  it('splits on semicolons at line ends and drops comment lines', () => {
    expect(
      splitStatements('-- header\nCREATE TABLE a (x UInt8) ENGINE = Log;\n\nSELECT 1;\nSELECT 2'),
    ).toEqual(['CREATE TABLE a (x UInt8) ENGINE = Log', 'SELECT 1', 'SELECT 2'])
  })
  it('keeps semicolons inside a line', () => {
    expect(splitStatements("SELECT ';' AS x;\n")).toEqual(["SELECT ';' AS x"])
  })
})

describe('renderStatement', () => {
  const entity =
    'CREATE TABLE IF NOT EXISTS orgs {{on_cluster}} (id UUID) ENGINE = {{global:ReplacingMergeTree(version, is_deleted)}} ORDER BY id'
  const events =
    'CREATE TABLE IF NOT EXISTS {{local:page_views}} {{on_cluster}} (id UUID) ENGINE = {{sharded:MergeTree}} ORDER BY id'

  it('renders plain SQL on a single node', () => {
    expect(renderStatement(entity, single)).toBe(
      'CREATE TABLE IF NOT EXISTS orgs  (id UUID) ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY id',
    )
    expect(renderStatement(events, single)).toBe(
      'CREATE TABLE IF NOT EXISTS page_views  (id UUID) ENGINE = MergeTree ORDER BY id',
    )
    expect(renderStatement('{{distributed:page_views:rand()}}', single)).toBeUndefined()
  })

  it('renders replicated, on-cluster DDL for entity tables', () => {
    expect(renderStatement(entity, cluster)).toBe(
      "CREATE TABLE IF NOT EXISTS orgs  ON CLUSTER 'main' (id UUID) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/vid/orgs', '{replica}', version, is_deleted) ORDER BY id",
    )
  })

  it('renders sharded local tables and their Distributed table', () => {
    expect(renderStatement(events, cluster)).toBe(
      "CREATE TABLE IF NOT EXISTS page_views_local  ON CLUSTER 'main' (id UUID) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/vid/page_views_local', '{replica}') ORDER BY id",
    )
    expect(renderStatement('{{distributed:page_views:cityHash64(session_id)}}', cluster)).toBe(
      "CREATE TABLE IF NOT EXISTS page_views ON CLUSTER 'main' AS page_views_local ENGINE = Distributed('main', 'vid', 'page_views_local', cityHash64(session_id))",
    )
  })

  it('alters a Distributed table on a cluster only', () => {
    const statement = '{{distributed_alter:sessions:ADD COLUMN IF NOT EXISTS icp String}}'
    expect(renderStatement(statement, single)).toBeUndefined()
    expect(renderStatement(statement, cluster)).toBe(
      "ALTER TABLE sessions ON CLUSTER 'main' ADD COLUMN IF NOT EXISTS icp String",
    )
  })

  it('rejects unknown placeholders', () => {
    expect(() => renderStatement('SELECT {{nope}}', single)).toThrow(/Unknown placeholder/)
  })

  it('renders every shipped migration in both shapes with no placeholder left', () => {
    // Tables with a Distributed table over `name_local`, in any migration.
    const sharded = new Set(
      readMigrations().flatMap((m) =>
        [...m.sql.matchAll(/\{\{distributed:(\w+):/g)].map((match) => match[1]!),
      ),
    )
    for (const migration of readMigrations()) {
      for (const target of [single, cluster]) {
        const statements = renderMigration(migration.sql, target)
        expect(statements.length).toBeGreaterThan(0)
        for (const statement of statements) expect(statement).not.toMatch(/\{\{|\}\}/)
      }
      const clustered = renderMigration(migration.sql, cluster)
      const createTables = clustered.filter((s) => /^CREATE TABLE/.test(s))
      for (const statement of createTables) {
        expect(statement).toMatch(/ON CLUSTER 'main'/)
        expect(statement).toMatch(/ENGINE = (Replicated\w+\(|Distributed\()/)
      }
      for (const statement of clustered.filter((s) => /^(ALTER|DROP)/.test(s))) {
        expect(statement).toMatch(/ON CLUSTER 'main'/)
      }
      // A replicated table dropped and created again at once needs its ZooKeeper path freed now.
      for (const statement of clustered.filter((s) => /^DROP TABLE/.test(s))) {
        expect(statement).toMatch(/ SYNC$/)
      }
      // A view writes into the local table of a sharded table, on the node that took the insert
      // (entity tables are whole on every node, and are written as they are).
      for (const view of clustered.filter((s) => s.startsWith('CREATE MATERIALIZED VIEW'))) {
        const target = / TO (\w+) /.exec(view)?.[1] ?? ''
        expect(sharded.has(target), view.slice(0, 80)).toBe(false)
        expect(view).not.toMatch(/FROM page_views\b(?!_local)/)
      }
    }
  })
})
