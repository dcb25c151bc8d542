import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { contactFields } from '@visitor-id/core/contact-fields'
import {
  type ContactRow,
  contactsTable,
  emailKey,
  findContactsByKeys,
  normalizeEmail,
} from '@visitor-id/core/identification'
import { nextVersion, sha256Hex } from '@visitor-id/core/ids'
import { createStore, migrate, type Store } from '@visitor-id/core/store'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ImportProgress, importContacts } from './index.js'

// The contacts import into a real embedded store: rejects, normalization, hashes, re-imports and
// the lookup identification uses.
const dir = tempDir('vid-contacts-unit-')
let store: Store

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: dir.dir })
  await migrate(store)
})

afterAll(async () => {
  await store?.close()
  dir.remove()
})

const file = (name: string, content: string) => {
  const target = path.join(dir.dir, name)
  writeFileSync(target, content)
  return target
}
const jsonl = (rows: object[]) => rows.map((row) => JSON.stringify(row)).join('\n')

const contact = async (id: string) =>
  (await store.query<ContactRow>('SELECT * FROM contacts FINAL WHERE id = {id:String}', { id }))[0]

describe('importContacts', () => {
  it('imports CSV, rejecting rows without an identity, with a malformed email or an oversized field', async () => {
    const csv = file(
      'contacts.csv',
      [
        'Email,Personal_Email,First_Name,Last_Name,Job_Title,LinkedIn_URL,Location,Company_Domain,Age_Range',
        ' Jane.Doe@Acme.EXAMPLE ,jane@Mail.example,Jane,Doe,"VP, Sales",https://www.linkedin.com/in/jane-doe/,"Berlin, DE",https://www.Acme.example/about,25-34',
        ',,No,Identity,Nobody,,,,',
        'not-an-email,,Bad,Email,,,,,',
        'sam@globex.example,,Sam,Long,,,,,',
        `tom@initech.example,,${'T'.repeat(257)},Smith,,,,,`,
        ',,Lin,Ked,,https://LinkedIn.com/in/Lin-Ked?trk=x,,,',
        ',pat@mail.example,Pat,Personal,,,,,',
        'kim@acme.example,,Kim,Lee,,,,not a domain,',
      ].join('\n'),
    )
    const updates: ImportProgress[] = []
    const report = await importContacts({
      store,
      file: csv,
      onProgress: (p) => updates.push(p),
      batchSize: 2,
    })
    expect(report).toMatchObject({ kind: 'contacts', read: 8, imported: 4, rejected: 4 })
    expect(report.rejects).toEqual([
      { line: 3, reason: 'a contact needs an id, email, personal_email or linkedin_url' },
      { line: 4, reason: 'email: not an email address' },
      { line: 6, reason: 'first_name: longer than 256 characters' },
      { line: 9, reason: 'company_domain: not a domain name such as example.com' },
    ])
    expect(updates.at(-1)).toEqual({
      bytesRead: expect.any(Number),
      totalBytes: expect.any(Number),
      rowsRead: 8,
      accepted: 4,
      rejected: 4,
    })
    expect(updates.at(-1)!.bytesRead).toBe(updates.at(-1)!.totalBytes)
    for (const update of updates) expect(update.accepted + update.rejected).toBe(update.rowsRead)

    const ids = await store.query<{ id: string }>('SELECT id FROM contacts FINAL ORDER BY id')
    expect(ids.map((row) => row.id)).toEqual([
      'jane.doe@acme.example', // the email
      'linkedin.com/in/lin-ked', // the LinkedIn URL, normalized
      'pat@mail.example', // the personal email
      'sam@globex.example',
    ])
    const jane = await contact('jane.doe@acme.example')
    expect(jane).toMatchObject({
      email: 'jane.doe@acme.example',
      email_sha256: sha256Hex('jane.doe@acme.example'),
      personal_email: 'jane@mail.example',
      personal_email_sha256: sha256Hex('jane@mail.example'),
      first_name: 'Jane',
      job_title: 'VP, Sales',
      linkedin_url: 'https://www.linkedin.com/in/jane-doe/',
      location: 'Berlin, DE',
      company_domain: 'acme.example',
      age_range: '25-34',
      gender: '',
      company_id: '',
    })
    expect(await contact('sam@globex.example')).toMatchObject({
      personal_email: '',
      personal_email_sha256: '',
    })
    const keys = await store.query<{ key: string }>(
      "SELECT key FROM contact_keys FINAL WHERE contact_id = 'jane.doe@acme.example' ORDER BY key",
    )
    expect(keys.map((row) => row.key).sort()).toEqual(
      [
        'jane.doe@acme.example',
        'jane@mail.example',
        sha256Hex('jane.doe@acme.example'),
        sha256Hex('jane@mail.example'),
      ].sort(),
    )
  })

  it('imports JSONL with ids, synonyms and non-string values', async () => {
    const report = await importContacts({
      store,
      file: file(
        'contacts.jsonl',
        [
          jsonl([
            {
              id: 'c-1',
              work_email: 'Ann@Umbrella.example',
              first_name: 'Ann',
              children: 2,
              homeowner: true,
              married: null,
              company_id: 'umbrella',
            },
            { id: 'c-2', email: 'ann@umbrella' },
          ]),
          'not json',
          jsonl([{ id: 'c-3', zip: '10115', linkedin: 'https://linkedin.com/in/c3' }]),
        ].join('\n'),
      ),
    })
    expect(report).toMatchObject({ read: 4, imported: 2, rejected: 2 })
    expect(report.rejects).toEqual([
      { line: 2, reason: 'email: not an email address' },
      { line: 3, reason: 'not a JSON object' },
    ])
    expect(await contact('c-1')).toMatchObject({
      email: 'ann@umbrella.example',
      children: '2',
      homeowner: 'true',
      married: '',
      company_id: 'umbrella',
    })
    expect(await contact('c-3')).toMatchObject({
      postal_code: '10115',
      linkedin_url: 'https://linkedin.com/in/c3',
      email_sha256: '',
    })
  })

  it('replaces a re-imported contact and its keys: old keys stop matching', async () => {
    const first = file(
      'first.csv',
      'id,email,personal_email,first_name\nre-1,old@acme.example,old@mail.example,Before\n',
    )
    await importContacts({ store, file: first })
    expect((await findContactsByKeys(store, ['old@acme.example'])).get('old@acme.example')?.id).toBe('re-1')

    const second = file('second.csv', 'id,email,personal_email,first_name\nre-1,new@acme.example,,After\n')
    const report = await importContacts({ store, file: second })
    expect(report).toMatchObject({ read: 1, imported: 1, rejected: 0 })

    const rows = await store.query<ContactRow>("SELECT * FROM contacts FINAL WHERE id = 're-1'")
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ email: 'new@acme.example', personal_email: '', first_name: 'After' })

    const stale = [
      'old@acme.example',
      'old@mail.example',
      sha256Hex('old@acme.example'),
      sha256Hex('old@mail.example'),
    ]
    expect((await findContactsByKeys(store, stale)).size).toBe(0)
    const found = await findContactsByKeys(store, ['new@acme.example', sha256Hex('new@acme.example')])
    expect([...found.values()].map((row) => [row.id, row.first_name])).toEqual([
      ['re-1', 'After'],
      ['re-1', 'After'],
    ])

    // The same contact twice in one file: the later row wins.
    await importContacts({
      store,
      file: file('twice.csv', 'email,first_name\ntwice@acme.example,One\ntwice@acme.example,Two\n'),
    })
    expect((await contact('twice@acme.example'))?.first_name).toBe('Two')
    expect(
      (await store.query("SELECT count() AS n FROM contacts FINAL WHERE id = 'twice@acme.example'"))[0],
    ).toEqual({ n: 1 })
  })
})

describe('findContactsByKeys', () => {
  it('finds a contact by email, personal email or the SHA-256 of either, whatever the case and spaces', async () => {
    const business = sha256Hex('jane.doe@acme.example')
    const personal = sha256Hex('jane@mail.example')
    const keys = [
      'jane.doe@acme.example',
      '  JANE.DOE@ACME.EXAMPLE ',
      'Jane@Mail.Example',
      business,
      business.toUpperCase(),
      ` ${personal} `,
      'nobody@acme.example',
      sha256Hex('nobody@acme.example'),
      'not an email',
      '',
    ]
    const found = await findContactsByKeys(store, keys)
    expect([...found.keys()]).toEqual(expect.arrayContaining(keys.slice(0, 6)))
    expect(found.size).toBe(6)
    for (const contact of found.values()) expect(contact.id).toBe('jane.doe@acme.example')
    expect(found.get(business)).toMatchObject({ first_name: 'Jane', company_domain: 'acme.example' })
  })

  it('returns every field of the contact, as its columns hold it (the card of migration 0019)', async () => {
    const header = ['id', ...contactFields]
    const values = header.map((field) => (field === 'id' ? 'card-1' : `${field}-value`))
    values[header.indexOf('email')] = 'card@acme.example'
    values[header.indexOf('personal_email')] = 'card@mail.example'
    values[header.indexOf('company_domain')] = 'acme.example'
    // What the card's escaping must give back: tabs, line breaks, backslashes, quotes, any script.
    values[header.indexOf('first_name')] = '"Jo\tsé \\ \\t ""Q"" \r\n ünï 名"'
    values[header.indexOf('address')] = '"Line 1\nLine 2\\"'
    await importContacts({ store, file: file('card.csv', `${header.join(',')}\n${values.join(',')}\n`) })
    const [columns] = await store.query<ContactRow>(
      `SELECT ${Object.keys(contactsTable.columns).join(', ')} FROM contacts FINAL WHERE id = 'card-1'`,
    )
    const found = await findContactsByKeys(store, ['card@mail.example'])
    expect(columns?.first_name).toContain('\t')
    expect(found.get('card@mail.example')).toEqual(columns)
    expect(Object.keys(found.get('card@mail.example')!).sort()).toEqual(
      Object.keys(contactsTable.columns).sort(),
    )
  })

  it('finds no contact whose live version is a tombstone', async () => {
    await importContacts({ store, file: file('gone.csv', 'email,first_name\ngone@acme.example,Gone\n') })
    expect((await findContactsByKeys(store, ['gone@acme.example'])).size).toBe(1)
    const [row] = await store.query<ContactRow & { version: string }>(
      "SELECT * FROM contacts FINAL WHERE id = 'gone@acme.example'",
    )
    await store.insert('contacts', [{ ...row!, version: nextVersion(), is_deleted: 1 }])
    expect(
      (await findContactsByKeys(store, ['gone@acme.example', sha256Hex('gone@acme.example')])).size,
    ).toBe(0)
  })

  it('answers an empty batch without a query', async () => {
    const counting: Store = { ...store, query: () => Promise.reject(new Error('no query expected')) }
    expect((await findContactsByKeys(counting, [])).size).toBe(0)
    expect((await findContactsByKeys(counting, ['not an email'])).size).toBe(0)
  })
})

describe('email helpers', () => {
  it('normalizeEmail trims, lowercases and refuses what is not an address', () => {
    expect(normalizeEmail('  Jane.Doe@Acme.COM ')).toBe('jane.doe@acme.com')
    expect(normalizeEmail("o'brien+news@sub.acme.co.uk")).toBe("o'brien+news@sub.acme.co.uk")
    expect(normalizeEmail('Jöe@München.de')).toBe('jöe@münchen.de')
    expect(normalizeEmail('x@xn--mnchen-3ya.de')).toBe('x@xn--mnchen-3ya.de')
    for (const bad of [
      '',
      'jane',
      'jane@',
      '@acme.com',
      'jane@acme',
      'ja ne@acme.com',
      'a@b@c.com',
      'a@1.2.3.4',
      '"a"@b.com',
      'a@-b.com',
      'a@b.c',
    ]) {
      expect(normalizeEmail(bad), bad).toBeUndefined()
    }
    const local = 'a'.repeat(64)
    const longest = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`
    expect(longest).toHaveLength(254)
    expect(normalizeEmail(longest)).toBe(longest)
    expect(
      normalizeEmail(`${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`),
    ).toBeUndefined()
    expect(normalizeEmail(`${'a'.repeat(65)}@acme.com`)).toBeUndefined()
  })

  it('emailKey: a normalized email, or a SHA-256 in lowercase hex', () => {
    const hash = sha256Hex('jane@acme.com')
    expect(emailKey(' Jane@ACME.com')).toBe('jane@acme.com')
    expect(emailKey(hash.toUpperCase())).toBe(hash)
    expect(emailKey(hash.slice(1))).toBeUndefined()
    expect(emailKey('nope')).toBeUndefined()
  })
})
