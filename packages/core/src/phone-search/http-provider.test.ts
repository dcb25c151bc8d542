// The http phone provider against a real local HTTP server: each test sets how the server answers
// and reads back what it received.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createHttpPhoneProvider, type HttpPhoneProviderOptions } from './http-provider.js'
import type { PhoneOutcome } from './provider.js'

interface Received {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

let server: Server
let base: string
let received: Received[] = []
let answer: (req: Received, res: ServerResponse) => void

/** Answers every request with this status, JSON body and headers. */
function respond(status: number, body?: unknown, headers: Record<string, string> = {}) {
  answer = (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(body === undefined ? '' : JSON.stringify(body))
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
    })
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      received.push(request)
      answer(request, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

beforeEach(() => {
  received = []
  respond(200, {})
})

// Not annotated: it fits PhoneLookup with or without fields other changes add to it.
const person = {
  searchId: 'search-1',
  organizationId: 'org-1',
  visitorId: 'visitor-1',
  linkedinUrl: 'https://www.linkedin.com/in/jane-doe?x=1&y=2',
  email: 'jane+work@example.com',
  firstName: 'Jane Ann',
  lastName: 'Dœ/Smith',
  contactId: 'contact-1',
}

function provider(options: Partial<HttpPhoneProviderOptions> = {}) {
  return createHttpPhoneProvider({ url: `${base}/lookup`, phonePath: 'phone', ...options })
}

describe('sync answers', () => {
  it('a national number is read in the default country', async () => {
    respond(200, { phone: '(415) 555-2671' })
    expect(await provider({ defaultCountry: 'us' }).lookup(person)).toEqual({
      status: 'found',
      phone: '+14155552671',
    })
  })

  it('an international number needs no default country; the path walks objects and arrays', async () => {
    respond(200, { data: { phones: [{ number: '+44 20 7183 8750' }] } })
    const outcome = await provider({ phonePath: 'data.phones[0].number' }).lookup(person)
    expect(outcome).toEqual({ status: 'found', phone: '+442071838750' })
  })

  it('an array at the path gives its first valid number', async () => {
    respond(200, { result: { phones: ['n/a', 12, null, { n: 1 }, '415-555-2671', '+442071838750'] } })
    const outcome = await provider({ phonePath: 'result.phones', defaultCountry: 'US' }).lookup(person)
    expect(outcome).toEqual({ status: 'found', phone: '+14155552671' })
  })

  it('a number given as a JSON number is read too', async () => {
    respond(200, { phone: 14155552671 })
    expect(await provider({ defaultCountry: 'US' }).lookup(person)).toEqual({
      status: 'found',
      phone: '+14155552671',
    })
  })

  it('an invalid number, a missing phone, an empty answer and a 404 are not found', async () => {
    for (const [status, body] of [
      [200, { phone: '12345' }],
      [200, { phone: ['nope', ''] }],
      [200, { other: '+14155552671' }],
      [200, { phone: { number: '+14155552671' } }],
      [204, undefined],
      [200, ['+14155552671']],
      [404, { error: 'no match' }],
    ] as const) {
      respond(status, body)
      expect(await provider({ defaultCountry: 'US' }).lookup(person), JSON.stringify(body)).toEqual({
        status: 'not_found',
      })
    }
  })

  it('a path never reaches inherited properties', async () => {
    respond(200, { phone: '+14155552671' })
    expect(await provider({ phonePath: 'constructor.name' }).lookup(person)).toEqual({ status: 'not_found' })
  })

  it('a 2xx answer that is not JSON is an error', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end('<html>login</html>')
    }
    expect(await provider().lookup(person)).toEqual({ status: 'error', reason: 'answer is not JSON' })
  })
})

describe('failures', () => {
  it('500, 503 and 402 are retried', async () => {
    for (const status of [500, 503, 402]) {
      respond(status, { error: 'x' })
      expect(await provider().lookup(person)).toEqual({
        status: 'retry',
        reason: `HTTP ${status}`,
        retryAfterMs: undefined,
      })
    }
  })

  it('429 is retried after Retry-After, in seconds or as an HTTP date', async () => {
    respond(429, {}, { 'retry-after': '30' })
    expect(await provider().lookup(person)).toEqual({
      status: 'retry',
      reason: 'HTTP 429',
      retryAfterMs: 30_000,
    })

    respond(503, {}, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() })
    const outcome = await provider().lookup(person)
    expect(outcome.status === 'retry' && outcome.retryAfterMs).toBeGreaterThan(115_000)
    expect(outcome.status === 'retry' && outcome.retryAfterMs).toBeLessThanOrEqual(120_000)

    respond(429, {}, { 'retry-after': 'soon' })
    expect(await provider().lookup(person)).toEqual({
      status: 'retry',
      reason: 'HTTP 429',
      retryAfterMs: undefined,
    })
  })

  it('401, 403 and 400 are configuration errors naming the status', async () => {
    for (const status of [401, 403, 400]) {
      respond(status, { error: 'x' })
      const outcome = await provider().lookup(person)
      expect(outcome.status).toBe('error')
      expect(outcome.status === 'error' && outcome.reason).toContain(`HTTP ${status}`)
    }
  })

  it('a redirect is not followed (it would carry the credential elsewhere)', async () => {
    respond(302, undefined, { location: `${base}/elsewhere` })
    const outcome = await provider({ authHeader: { name: 'X-Api-Key', value: 'k' } }).lookup(person)
    expect(outcome.status === 'error' && outcome.reason).toContain('HTTP 302')
    expect(received.map((r) => r.url)).toEqual(['/lookup'])
  })

  it('an answer slower than timeoutMs is retried', async () => {
    answer = (_req, res) => {
      const timer = setTimeout(() => res.end('{"phone":"+14155552671"}'), 2000)
      res.on('close', () => clearTimeout(timer))
    }
    const started = Date.now()
    expect(await provider({ timeoutMs: 150 }).lookup(person)).toEqual({
      status: 'retry',
      reason: 'timeout after 150 ms',
    })
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('a body that stalls beyond timeoutMs is retried too', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"phone":')
      const timer = setTimeout(() => res.end('"+14155552671"}'), 2000)
      res.on('close', () => clearTimeout(timer))
    }
    expect(await provider({ timeoutMs: 150 }).lookup(person)).toEqual({
      status: 'retry',
      reason: 'timeout after 150 ms',
    })
  })

  it('a refused connection is retried', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const outcome = await provider({ url: `http://127.0.0.1:${port}/lookup` }).lookup(person)
    expect(outcome).toEqual({ status: 'retry', reason: 'network error (ECONNREFUSED)' })
  })

  it('reasons never carry the credential or the URL', async () => {
    const secret = 'sk-live-0123456789'
    const options = {
      url: `${base}/lookup?api_key=${secret}&li={linkedinUrl}`,
      authHeader: { name: 'Authorization', value: `Bearer ${secret}` },
      timeoutMs: 150,
    }
    const outcomes: PhoneOutcome[] = []
    for (const status of [401, 403, 500, 429, 402, 418]) {
      respond(status, { error: `bad key ${secret}` }, { 'retry-after': '1' })
      outcomes.push(await provider(options).lookup(person))
    }
    answer = (_req, res) => {
      const timer = setTimeout(() => res.end('{}'), 2000)
      res.on('close', () => clearTimeout(timer))
    }
    outcomes.push(await provider(options).lookup(person))
    outcomes.push(await provider({ ...options, url: `http://127.0.0.1:1/?api_key=${secret}` }).lookup(person))
    for (const outcome of outcomes) {
      expect(outcome.status === 'retry' || outcome.status === 'error').toBe(true)
      const text = JSON.stringify(outcome)
      expect(text).not.toContain(secret)
      expect(text).not.toContain('127.0.0.1')
    }
  })

  it('options that cannot work are refused at creation, without echoing the URL', () => {
    expect(() => provider({ url: 'ftp://x/?key=secret' })).toThrow('url must be an http(s) URL')
    expect(() => provider({ url: 'not a url secret' })).toThrow(/^((?!secret).)*$/)
    expect(() => provider({ mode: 'poll' })).toThrow('poll mode needs pollUrl')
    expect(() => provider({ phonePath: ' ' })).toThrow('phonePath is empty')
  })
})

describe('requests', () => {
  it('sends the credential header and URL-encodes the placeholders', async () => {
    respond(200, { phone: '+14155552671' })
    const p = provider({
      url: `${base}/lookup/{searchId}?li={linkedinUrl}&email={email}&name={firstName}%20{lastName}&cb={callbackUrl}&keep={other}`,
      authHeader: { name: 'X-Api-Key', value: 'key-123' },
    })
    await p.lookup({ ...person, callbackUrl: 'https://vid.example/phone/callback?t=a&b' })
    const [request] = received
    expect(request?.method).toBe('GET')
    expect(request?.headers['x-api-key']).toBe('key-123')
    expect(request?.headers.accept).toBe('application/json')
    const url = new URL(request!.url, base)
    expect(url.pathname).toBe('/lookup/search-1')
    expect(Object.fromEntries(url.searchParams)).toEqual({
      li: person.linkedinUrl,
      email: person.email,
      name: 'Jane Ann Dœ/Smith',
      cb: 'https://vid.example/phone/callback?t=a&b',
      keep: '{other}',
    })

    received = []
    await provider({ url: `${base}/lookup?cb={callbackUrl}` }).lookup(person)
    expect(received[0]?.url).toBe('/lookup?cb=')
  })

  it('POST sends the person as JSON', async () => {
    respond(200, { phone: '+14155552671' })
    const p = provider({ method: 'POST', authHeader: { name: 'Authorization', value: 'Bearer t' } })
    expect(await p.lookup(person)).toEqual({ status: 'found', phone: '+14155552671' })
    const [request] = received
    expect(request?.method).toBe('POST')
    expect(request?.headers.authorization).toBe('Bearer t')
    expect(request?.headers['content-type']).toBe('application/json')
    expect(JSON.parse(request!.body)).toEqual({
      linkedinUrl: person.linkedinUrl,
      email: person.email,
      firstName: person.firstName,
      lastName: person.lastName,
      searchId: person.searchId,
    })

    received = []
    await p.lookup({ ...person, callbackUrl: 'https://vid.example/cb' })
    expect(JSON.parse(received[0]!.body).callbackUrl).toBe('https://vid.example/cb')
  })
})

describe('callback mode', () => {
  const withCallback = { ...person, callbackUrl: 'https://vid.example/phone/callback' }

  it('an accepted request is pending, unless the answer already has the phone', async () => {
    const p = provider({ mode: 'callback', method: 'POST', phonePath: 'result.phone' })
    expect(p.poll).toBeUndefined()
    respond(202, { queued: true })
    expect(await p.lookup(withCallback)).toEqual({ status: 'pending' })
    answer = (_req, res) => res.writeHead(200).end('accepted')
    expect(await p.lookup(withCallback)).toEqual({ status: 'pending' })
    respond(200, { result: { phone: '+14155552671' } })
    expect(await p.lookup(withCallback)).toEqual({ status: 'found', phone: '+14155552671' })
    respond(200, { status: 'not_found' })
    expect(await p.lookup(withCallback)).toEqual({ status: 'not_found' })
    respond(500)
    expect((await p.lookup(withCallback)).status).toBe('retry')
  })

  it('without a callback URL there is nowhere to answer: an error, and no request', async () => {
    const outcome = await provider({ mode: 'callback' }).lookup(person)
    expect(outcome.status).toBe('error')
    expect(received).toEqual([])
  })

  it('parseCallback reads the phone at the path, or not found', () => {
    const p = provider({ mode: 'callback', phonePath: 'result.phones', defaultCountry: 'GB' })
    expect(p.parseCallback?.({ result: { phones: ['020 7183 8750'] } })).toEqual({
      status: 'found',
      phone: '+442071838750',
    })
    expect(p.parseCallback?.({ status: 'not_found' })).toEqual({ status: 'not_found' })
    expect(p.parseCallback?.({ result: { phones: [] } })).toEqual({ status: 'not_found' })
    expect(p.parseCallback?.({ result: { phones: ['garbage'] } })).toEqual({ status: 'not_found' })
    expect(p.parseCallback?.(null)).toEqual({ status: 'not_found' })
    expect(p.parseCallback?.('text')).toEqual({ status: 'not_found' })
  })
})

describe('poll mode', () => {
  it('pending until the poll URL has the phone', async () => {
    const p = provider({
      mode: 'poll',
      url: `${base}/jobs`,
      pollUrl: `${base}/jobs/{searchId}`,
      phonePath: 'data.phone',
    })
    expect(p.parseCallback).toBeUndefined()
    respond(202, { id: 'job-1' })
    expect(await p.lookup(person)).toEqual({ status: 'pending' })
    respond(202)
    expect(await p.poll?.(person)).toEqual({ status: 'pending' })
    respond(200, { data: { state: 'running' } })
    expect(await p.poll?.(person)).toEqual({ status: 'pending' })
    respond(200, { data: { phone: '+1 415 555 2671' } })
    expect(await p.poll?.(person)).toEqual({ status: 'found', phone: '+14155552671' })
    expect(received.map((r) => r.url)).toEqual([
      '/jobs',
      '/jobs/search-1',
      '/jobs/search-1',
      '/jobs/search-1',
    ])
  })

  it('the first answer may already have the phone; 404 and an explicit not_found end the search', async () => {
    const p = provider({ mode: 'poll', pollUrl: `${base}/jobs/{searchId}` })
    respond(200, { phone: '+14155552671' })
    expect(await p.lookup(person)).toEqual({ status: 'found', phone: '+14155552671' })
    respond(404)
    expect(await p.poll?.(person)).toEqual({ status: 'not_found' })
    respond(200, { status: 'not_found' })
    expect(await p.poll?.(person)).toEqual({ status: 'not_found' })
    respond(429, {}, { 'retry-after': '5' })
    expect(await p.poll?.(person)).toEqual({ status: 'retry', reason: 'HTTP 429', retryAfterMs: 5000 })
  })
})
