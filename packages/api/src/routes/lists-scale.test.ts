// Lists at scale and over time, on a real server: the worker refreshes lists with auto-update on its
// own, and a 1 M-member audience export streams over HTTP with flat memory, every line checked.
import { createHash } from 'node:crypto'
import v8 from 'node:v8'
import vm from 'node:vm'
import { type Harness, startHarness } from '@visitor-id/testing/harness'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

let h: Harness

beforeAll(async () => {
  // Lists with auto-update are due one second after their last refresh.
  h = await startHarness({ LIST_AUTO_REFRESH_MS: '1000' })
})

afterAll(async () => {
  await h?.stop()
})

const save = async (body: Record<string, unknown>) => {
  const response = await h.request({
    method: 'POST',
    url: '/api/v1/lists/save',
    payload: { organizationId: h.boot.organizationId, contacts_found: 0, ...body },
  })
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as { id: string; lastSyncedTime: string; autoUpdateStatus: string }
}
const get = async (id: string) =>
  (await h.request({ method: 'GET', url: `/api/v1/lists/${id}` })).json() as { lastSyncedTime: string }

describe('the worker', () => {
  it('refreshes lists with auto-update when they are due, and leaves the others alone', async () => {
    const auto = await save({ listName: 'auto', filter: {}, autoUpdateStatus: 'enabled' })
    const manual = await save({ listName: 'manual', filter: {}, autoUpdateStatus: 'disabled' })
    const deadline = Date.now() + 20_000
    while ((await get(auto.id)).lastSyncedTime === auto.lastSyncedTime) {
      expect(Date.now(), 'the worker never refreshed the list').toBeLessThan(deadline)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect((await get(manual.id)).lastSyncedTime).toBe(manual.lastSyncedTime)
  }, 30_000)
})

describe('a 1 M-member export', () => {
  const members = 1_000_000
  // Every tenth contact shares one of 1,000 addresses; every seventh business email is written in
  // capitals with spaces around; every fifth contact has only a personal email.
  const email = (n: number) => {
    if (n % 5 === 0) return { email: '', personal: ` Home${n}@Mail.test` }
    const local = n % 10 === 1 ? `shared${n % 1000}` : `user${n}`
    return { email: n % 7 === 0 ? `  ${local.toUpperCase()}@BIG.TEST ` : `${local}@big.test`, personal: '' }
  }

  it('streams every distinct hash once, in order, with memory flat', async () => {
    // Written 100,000 at a time, as an import writes batches: a million rows through the views of
    // contacts in one statement would need more than the engine may hold (STORE_MEMORY_LIMIT).
    for (let offset = 0; offset < members; offset += 100_000) {
      await h.store.command(
        `INSERT INTO contacts (id, email, personal_email, department, created_at, updated_at, version)
       SELECT concat('big-', toString(number)),
         if(number % 5 = 0, '',
           if(number % 7 = 0, concat('  ', upper(if(number % 10 = 1, concat('shared', toString(number % 1000)), concat('user', toString(number)))), '@BIG.TEST '),
             concat(if(number % 10 = 1, concat('shared', toString(number % 1000)), concat('user', toString(number))), '@big.test'))),
         if(number % 5 = 0, concat(' Home', toString(number), '@Mail.test'), ''),
         'bulk', now64(3), now64(3), 1
       FROM numbers(${offset}, 100000)`,
      )
    }
    const list = await save({ listName: 'bulk', filter: { contact: { departments: ['bulk'] } } })
    expect(list).toMatchObject({ contactsNum: members })

    const response = await fetch(
      `${h.server.url}/api/v1/lists/${list.id}/chat-ads-export?organizationId=${h.boot.organizationId}`,
      { headers: { 'x-api-key': h.boot.apiKey } },
    )
    expect(response.status).toBe(200)
    // What the process keeps, not the garbage between two collections: the heap right after a full
    // collection, every 100,000 lines.
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc') as () => void
    const retained = () => {
      gc()
      return process.memoryUsage().heapUsed
    }
    const baseline = retained()
    let peak = baseline
    // Lines are checked as they arrive (never kept): hex digests, strictly increasing (so distinct),
    // and folded into one digest compared below with the expected file.
    const received = createHash('sha256')
    let lines = 0
    let previous = ''
    let rest = ''
    const decoder = new TextDecoder()
    const reader = response.body!.getReader()
    for (;;) {
      const { done, value: chunk } = await reader.read()
      if (done) break
      const text = rest + decoder.decode(chunk, { stream: true })
      const parts = text.split('\r\n')
      rest = parts.pop()!
      for (const line of parts) {
        if (lines++ === 0) {
          expect(line).toBe('email_sha256')
          continue
        }
        if (!/^[0-9a-f]{64}$/.test(line) || line <= previous) throw new Error(`line ${lines}: ${line}`)
        previous = line
        received.update(line)
        if (lines % 100_000 === 0) peak = Math.max(peak, retained())
      }
    }
    expect(rest).toBe('')
    const unique = Number(response.headers.get('x-unique-email-count'))
    expect(lines - 1).toBe(unique)
    // The stream holds a page of hashes at a time, not the file (about 66 MB of text).
    expect(peak - baseline).toBeLessThan(40 * 1024 * 1024)

    const expected = new Set<string>()
    for (let n = 0; n < members; n++) {
      const { email: business, personal } = email(n)
      expected.add(
        createHash('sha256')
          .update((business || personal).trim().toLowerCase())
          .digest('hex'),
      )
    }
    expect(unique).toBe(expected.size)
    const digest = createHash('sha256')
    for (const hash of [...expected].sort()) digest.update(hash)
    expect(received.digest('hex')).toBe(digest.digest('hex'))
  }, 180_000)
})
