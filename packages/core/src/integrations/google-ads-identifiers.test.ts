import { tempDir } from '@visitor-id/testing/temp-dir'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStore, type Store } from '../store/client.js'
import { googleEmailHash, googleEmailHashSql } from './google-ads-identifiers.js'

/** Addresses of every shape the rule cares about: Gmail or not, dots, +tags, case, whitespace. */
const emails = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9.+_-]{0,12}$/),
    fc.constantFrom('gmail.com', 'GMail.com', 'googlemail.com', 'example.com', 'mail.gmail.com', 'gmail.co'),
    fc.constantFrom('', ' ', '  ', '\t', '\n'),
    fc.constantFrom('', ' ', '\r\n'),
    fc.boolean(),
  )
  .map(([local, domain, before, inside, noAt]) =>
    noAt ? `${before}${local}${inside}${domain}` : `${before}${local}${inside}@${domain} `,
  )

// The sync hashes a whole list in the engine; single addresses are hashed in TypeScript. Both must
// give Google the same hash, or a member would be added under one and never removed under the other.
describe('googleEmailHashSql on the engine', () => {
  const tmp = tempDir('vid-google-hash-')
  let store: Store
  beforeAll(() => {
    store = createStore({ database: 'default', dataDir: tmp.dir, sessions: 2 })
  })
  afterAll(async () => {
    await store.close()
    tmp.remove()
  })

  const engineHashes = async (values: string[]) => {
    const rows = await store.query<{ hash: string }>(
      `SELECT ${googleEmailHashSql('value')} AS hash
       FROM (SELECT arrayJoin({values:Array(String)}) AS value)`,
      { values },
    )
    return rows.map((row) => row.hash)
  }

  it('hashes the examples of Google’s guide as googleEmailHash does', async () => {
    const examples = [
      'cloudy.sanfrancisco+shopping@gmail.com',
      'Jane.Doe@GoogleMail.com',
      'user.name+NYC@Example.com',
      '  j.a.n.e @ gmail.com',
      'jane.doe@mail.gmail.com',
    ]
    expect(await engineHashes(examples)).toEqual(examples.map(googleEmailHash))
    expect(googleEmailHash('cloudy.sanfrancisco+shopping@gmail.com')).toBe(
      googleEmailHash('cloudysanfrancisco@gmail.com'),
    )
  })

  it('is empty for an empty email', async () => {
    expect(await engineHashes(['', ' '])).toEqual(['', ''])
  })

  it('agrees with googleEmailHash on 2,000 generated addresses', async () => {
    const values = fc.sample(emails, { numRuns: 2000, seed: 20261128 }).filter((v) => v.trim() !== '')
    const fromEngine = await engineHashes(values)
    const mismatches = values.filter((value, i) => fromEngine[i] !== googleEmailHash(value))
    expect(mismatches).toEqual([])
  })
})
