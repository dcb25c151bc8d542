import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// Not exported by @visitor-id/core yet; the source is what the dispatcher signs with.
import { webhookHeaders } from '../packages/core/src/webhooks/signature.js'

// The receivers of docs/receiving-webhooks.md, copied out of the page as a partner would and run
// as they are: a delivery signed as the service signs it is accepted, and a tampered body, another
// secret, a stale or future timestamp and an unsigned request are refused. So the page cannot
// drift from the signatures (or rot) unnoticed.

const repoRoot = path.resolve(import.meta.dirname, '..')
const page = readFileSync(path.join(repoRoot, 'docs/receiving-webhooks.md'), 'utf8')
const secret = 'partner-sécret-0123456789'
const dir = tempDir('vid-webhook-snippets-')

/** The code block right after `<!-- snippet: name -->` in the page. */
function snippet(name: string): string {
  const match = page.match(new RegExp(`<!-- snippet: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\`\\n`))
  if (!match?.[1]) throw new Error(`docs/receiving-webhooks.md has no snippet "${name}"`)
  return match[1]
}

interface Receiver {
  child: ChildProcess
  url: string
  output: () => string
}

/** Starts a snippet on a free port (PORT=0) and waits for the port it prints. */
async function start(command: string, file: string): Promise<Receiver> {
  const child = spawn(command, [file], {
    cwd: dir.dir,
    env: { ...process.env, PORT: '0', WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start: ${stdout}${stderr}`)), 15_000)
    child.stdout!.on('data', () => {
      const found = stdout.match(/listening on port (\d+)/)
      if (found?.[1]) {
        clearTimeout(timer)
        resolve(found[1])
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${file} exited (${code}): ${stdout}${stderr}`))
    })
  })
  return { child, url: `http://127.0.0.1:${port}/`, output: () => stdout }
}

const receivers: Receiver[] = []

beforeAll(() => {
  writeFileSync(path.join(dir.dir, 'receiver.mjs'), snippet('node-receiver'))
  writeFileSync(path.join(dir.dir, 'receiver.py'), snippet('python-receiver'))
})

afterAll(async () => {
  for (const { child } of receivers) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  }
  dir.remove()
})

let counter = 0
/** A payload of the identification webhook's shape, with a fresh event id. */
function event() {
  counter += 1
  const eventId = `0b6a4f2e-1c3d-4e5f-8a9b-${String(counter).padStart(12, '0')}`
  const payload = {
    event_type: 'visitor.identified',
    timestamp: new Date().toISOString(),
    organization_id: '7d1c0d2a-3b4e-4f50-9a61-b2c3d4e5f607',
    session_id: '5e4d3c2b-1a09-4f8e-9d7c-6b5a49382716',
    workspace: 'Acme',
    visitor: { id: 'v1', email: 'ada@example.com', city: 'Zürich', phone: '' },
    company: { id: 'c1', name: 'Acme', domain: 'acme.example' },
    session: { landing_page: 'https://example.com/pricing', page_view_count: 1 },
    page_views: [{ url: 'https://example.com/pricing', visited_at: new Date().toISOString() }],
  }
  return { eventId, body: Buffer.from(JSON.stringify(payload)) }
}

const now = () => Math.floor(Date.now() / 1000)

async function post(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  // a copy as a plain Uint8Array: the DOM typings of fetch do not take a Buffer
  const response = await fetch(url, { method: 'POST', body: new Uint8Array(body), headers })
  await response.arrayBuffer()
  return response.status
}

/** Polls until `check` holds (the receiver prints after it answers). */
async function eventually(check: () => boolean, ms = 5_000) {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe.each([
  { name: 'Node', command: process.execPath, file: 'receiver.mjs' },
  { name: 'Python', command: 'python3', file: 'receiver.py' },
])('the $name receiver of the docs', ({ command, file }) => {
  let receiver: Receiver
  const sign = (body: Buffer, eventId: string, options: { secret?: string; timestamp?: number } = {}) =>
    webhookHeaders({
      body,
      eventId,
      eventType: 'visitor.identified',
      secret: options.secret ?? secret,
      timestamp: options.timestamp ?? now(),
    })

  beforeAll(async () => {
    receiver = await start(command, file)
    receivers.push(receiver)
  })

  it('accepts a delivery signed as the service signs it, and handles it', async () => {
    const { eventId, body } = event()
    expect(await post(receiver.url, body, sign(body, eventId))).toBe(200)
    await eventually(() => receiver.output().includes(`visitor.identified ${eventId}`))
  })

  it('accepts a timestamp within the 5-minute window (a retry signed a minute ago)', async () => {
    const { eventId, body } = event()
    expect(await post(receiver.url, body, sign(body, eventId, { timestamp: now() - 60 }))).toBe(200)
  })

  it('refuses a tampered body, another secret and a tampered signature', async () => {
    const { eventId, body } = event()
    const headers = sign(body, eventId)
    const tampered = Buffer.from(body.toString().replace('ada@example.com', 'eve@example.com'))
    expect(await post(receiver.url, tampered, headers)).toBe(401)
    expect(await post(receiver.url, body, sign(body, eventId, { secret: `${secret}!` }))).toBe(401)
    const flipped = headers['x-service-signature']!.replace(/^./, (c) => (c === '0' ? '1' : '0'))
    expect(await post(receiver.url, body, { ...headers, 'x-service-signature': flipped })).toBe(401)
    expect(await post(receiver.url, body, { ...headers, 'x-service-signature': '' })).toBe(401)
  })

  it('refuses a stale or future timestamp, and a Standard Webhooks signature of another timestamp', async () => {
    const { eventId, body } = event()
    // X-Service-Signature is still right here: only the replay check can refuse these
    expect(await post(receiver.url, body, sign(body, eventId, { timestamp: now() - 10 * 60 }))).toBe(401)
    expect(await post(receiver.url, body, sign(body, eventId, { timestamp: now() + 10 * 60 }))).toBe(401)
    const old = sign(body, eventId, { timestamp: now() - 10 * 60 })
    const current = sign(body, eventId)
    expect(
      await post(receiver.url, body, { ...old, 'webhook-timestamp': current['webhook-timestamp']! }),
    ).toBe(401)
  })

  it('refuses an unsigned delivery (a webhook without a secret)', async () => {
    const { eventId, body } = event()
    expect(await post(receiver.url, body, sign(body, eventId, { secret: '' }))).toBe(401)
  })

  it('acknowledges a duplicate without handling it twice', async () => {
    const { eventId, body } = event()
    expect(await post(receiver.url, body, sign(body, eventId))).toBe(200)
    expect(await post(receiver.url, body, sign(body, eventId, { timestamp: now() - 30 }))).toBe(200)
    // output is in order: once a later event is printed, a second line for the first would be too
    const later = event()
    expect(await post(receiver.url, later.body, sign(later.body, later.eventId))).toBe(200)
    await eventually(() => receiver.output().includes(later.eventId))
    expect(receiver.output().split(eventId).length - 1).toBe(1)
    // nothing refused was ever handled
    expect(receiver.output().match(/^visitor\.identified /gm)).toHaveLength(4)
  })
})
