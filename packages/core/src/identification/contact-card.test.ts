// The contact card (migration 0019) on a store upgraded to it: contacts stored before the column
// existed are found with every field, while the migration's MATERIALIZE COLUMN runs and after it.
import { copyFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { timeUntil } from '@visitor-id/testing/poll'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contactFields } from '../contact-fields/contact-fields.js'
import { createStore, type Store } from '../store/client.js'
import { defaultMigrationsDir, migrate, readMigrations } from '../store/migrate.js'
import { type ContactRow, contactsTable, findContactsByKeys } from './contacts.js'

const tmp = tempDir('vid-contact-card-')
let store: Store

/** A contact with every field set, some with what TSV escapes. */
const contactOf = (n: number): ContactRow & { version: number } => {
  const row = Object.fromEntries(contactFields.map((field) => [field, `${field} ${n}`])) as Record<
    string,
    string
  >
  return {
    ...(row as unknown as ContactRow),
    id: `before-${n}`,
    email: `before${n}@acme.example`,
    personal_email: `before${n}@mail.example`,
    first_name: `Tab\there, line\nbreak, back\\slash ${n}`,
    email_sha256: '',
    personal_email_sha256: '',
    created_at: '2026-11-01T10:00:00.123Z',
    updated_at: '2026-11-02T11:30:00.456Z',
    version: 1,
  }
}

const columnsOf = (ids: string[]) =>
  store.query<ContactRow>(
    `SELECT ${Object.keys(contactsTable.columns).join(', ')} FROM contacts FINAL WHERE id IN {ids:Array(String)} ORDER BY id`,
    { ids },
  )

beforeAll(async () => {
  // The store as it was before migration 0019, holding contacts.
  const before = path.join(tmp.dir, 'migrations-before-0019')
  mkdirSync(before)
  for (const migration of readMigrations().filter((m) => m.version < 19)) {
    copyFileSync(path.join(defaultMigrationsDir, migration.name), path.join(before, migration.name))
  }
  store = createStore({ database: 'default', dataDir: path.join(tmp.dir, 'data') })
  await migrate(store, { dir: before })
  await store.insert('contacts', [contactOf(1), contactOf(2), contactOf(3)])
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

describe('the contact card on an upgraded store', () => {
  it('finds contacts stored before the card with every field, before and after the column is materialized', async () => {
    const { applied } = await migrate(store)
    expect(applied[0]).toBe('0019_contact_cards.sql')
    const keys = ['before1@acme.example', 'before2@mail.example', 'BEFORE3@ACME.EXAMPLE']
    const expected = await columnsOf(['before-1', 'before-2', 'before-3'])
    expect(expected).toHaveLength(3)
    const found = async () =>
      [...(await findContactsByKeys(store, keys)).values()].sort((a, b) => a.id.localeCompare(b.id))

    expect(await found()).toEqual(expected)
    await timeUntil(async () => {
      const [pending] = await store.query<{ n: number }>(
        "SELECT count() AS n FROM system.mutations WHERE table = 'contacts' AND NOT is_done",
      )
      return Number(pending?.n) === 0
    }, 30_000)
    expect(await found()).toEqual(expected)
    expect(expected[0]?.first_name).toContain('\t')
  })
})
