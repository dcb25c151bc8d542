// The webhook sender against real receivers on loopback: each test sets how the receiver answers
// and reads back what it received. Loopback is exactly what the SSRF guard refuses, so the
// delivery tests opt in with allowPrivate and the guard tests check that nothing arrived.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { checkWebhookUrl, isPublicAddress, sendWebhook } from './http-sender.js'

interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
}

interface Receiver {
  server: Server
  port: number
  base: string
  received: Received[]
  answer: (res: ServerResponse) => void
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { received: [], answer: (res: ServerResponse) => res.end() } as unknown as Receiver
  receiver.server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      receiver.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      receiver.answer(res)
    })
  })
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve))
  receiver.port = (receiver.server.address() as AddressInfo).port
  receiver.base = `http://127.0.0.1:${receiver.port}`
  return receiver
}

async function stop(receiver: Receiver) {
  receiver.server.closeAllConnections()
  await new Promise((resolve) => receiver.server.close(resolve))
}

let receiver: Receiver
let other: Receiver

beforeAll(async () => {
  receiver = await startReceiver()
  other = await startReceiver()
})

afterAll(async () => {
  await stop(receiver)
  await stop(other)
})

beforeEach(() => {
  receiver.received = []
  other.received = []
  receiver.answer = (res) => res.end('ok')
})

// Bytes a re-encoding would change: they must arrive exactly as signed.
const body = Buffer.from('{"event":"visitor.identified","name":"Dœ","n":1.50}\n', 'utf8')
const headers = { 'content-type': 'application/json', 'x-signature': 'sha256=abc', 'x-event-id': 'evt-1' }

describe('delivery', () => {
  it('a 2xx is ok; the receiver gets the exact bytes and headers', async () => {
    receiver.answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('thanks')
    }
    const result = await sendWebhook({ url: `${receiver.base}/hook?x=1`, body, headers, allowPrivate: true })
    expect(result).toMatchObject({ ok: true, statusCode: 200, responseBody: 'thanks' })
    expect(result.error).toBeUndefined()
    expect(result.responseTimeMs).toBeGreaterThanOrEqual(0)
    expect(receiver.received).toHaveLength(1)
    const [got] = receiver.received
    expect(got?.method).toBe('POST')
    expect(got?.url).toBe('/hook?x=1')
    expect(got?.body.equals(body)).toBe(true)
    expect(got?.headers).toMatchObject({ ...headers, 'content-length': String(body.length) })
  })

  it('localhost is allowed with allowPrivate', async () => {
    const result = await sendWebhook({
      url: `http://localhost:${receiver.port}/`,
      body,
      headers,
      allowPrivate: true,
    })
    expect(result).toMatchObject({ ok: true, statusCode: 200 })
    expect(receiver.received).toHaveLength(1)
  })

  it('a 500 fails with its status', async () => {
    receiver.answer = (res) => {
      res.writeHead(500)
      res.end('boom')
    }
    const result = await sendWebhook({ url: receiver.base, body, headers, allowPrivate: true })
    expect(result).toMatchObject({ ok: false, statusCode: 500, error: 'HTTP 500', responseBody: 'boom' })
  })

  it('a redirect fails and is not followed', async () => {
    receiver.answer = (res) => {
      res.writeHead(301, { location: `${other.base}/elsewhere` })
      res.end()
    }
    const result = await sendWebhook({ url: receiver.base, body, headers, allowPrivate: true })
    expect(result).toMatchObject({ ok: false, statusCode: 301, error: 'redirect (301) not followed' })
    expect(other.received).toHaveLength(0)
  })

  it('a receiver that never answers times out', async () => {
    receiver.answer = () => {}
    const started = Date.now()
    const result = await sendWebhook({
      url: receiver.base,
      body,
      headers,
      allowPrivate: true,
      timeoutMs: 300,
    })
    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'timeout after 300 ms' })
    expect(Date.now() - started).toBeLessThan(1000)
    expect(result.responseTimeMs).toBeGreaterThanOrEqual(290)
  })

  it('a body that never ends times out too, with the status it had', async () => {
    receiver.answer = (res) => {
      res.writeHead(200)
      res.write('partial')
    }
    const result = await sendWebhook({
      url: receiver.base,
      body,
      headers,
      allowPrivate: true,
      timeoutMs: 300,
    })
    expect(result).toMatchObject({ ok: false, statusCode: 200, error: 'timeout after 300 ms' })
  })

  it('reads at most 64 KB of a 1 MB answer, promptly', async () => {
    receiver.answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('x'.repeat(1024 * 1024))
    }
    const started = Date.now()
    const result = await sendWebhook({ url: receiver.base, body, headers, allowPrivate: true })
    expect(result).toMatchObject({ ok: true, statusCode: 200 })
    expect(result.responseBody?.length).toBe(64 * 1024)
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('maxResponseBytes caps the answer read', async () => {
    receiver.answer = (res) => res.end('0123456789')
    const result = await sendWebhook({
      url: receiver.base,
      body,
      headers,
      allowPrivate: true,
      maxResponseBytes: 4,
    })
    expect(result).toMatchObject({ ok: true, responseBody: '0123' })
  })

  it('a refused connection is a network error', async () => {
    const closed = await startReceiver()
    await stop(closed)
    const result = await sendWebhook({ url: closed.base, body, headers, allowPrivate: true })
    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'network error (ECONNREFUSED)' })
  })

  it('a URL that cannot be used fails without a request, and the reason never holds the URL', async () => {
    for (const url of [
      'ftp://example.com/x',
      '/relative',
      `http://user:secret@127.0.0.1:${receiver.port}/`,
    ]) {
      const result = await sendWebhook({ url, body, headers, allowPrivate: true })
      expect(result.ok).toBe(false)
      expect(result.statusCode).toBeNull()
      expect(result.error).not.toContain('secret')
    }
    expect(receiver.received).toHaveLength(0)
  })

  it('never throws, even for a header Node refuses', async () => {
    const result = await sendWebhook({
      url: receiver.base,
      body,
      headers: { 'x-bad': 'a\r\nb' },
      allowPrivate: true,
    })
    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'invalid request (ERR_INVALID_CHAR)' })
  })
})

describe('the SSRF guard (allowPrivate false)', () => {
  const cases: [string, () => string, RegExp][] = [
    ['IPv4 loopback', () => `http://127.0.0.1:${receiver.port}/`, /^address 127\.0\.0\.1 is loopback$/],
    ['IPv6 loopback', () => `http://[::1]:${receiver.port}/`, /^address ::1 is loopback$/],
    [
      'metadata service',
      () => 'http://169.254.169.254/latest/meta-data/',
      /^address 169\.254\.169\.254 is link-local$/,
    ],
    ['private network', () => 'http://10.0.0.1/', /^address 10\.0\.0\.1 is private$/],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${receiver.port}/`, /is loopback$/],
    // No special case for the name: the lookup done for the connection is what refuses it.
    [
      'localhost, refused at connect time',
      () => `http://localhost:${receiver.port}/`,
      /^address (127\.0\.0\.1|::1) is loopback$/,
    ],
  ]
  for (const [name, url, reason] of cases) {
    it(`refuses ${name}`, async () => {
      const result = await sendWebhook({ url: url(), body, headers, timeoutMs: 2000 })
      expect(result.ok).toBe(false)
      expect(result.statusCode).toBeNull()
      expect(result.error).toMatch(reason)
      expect(receiver.received).toHaveLength(0)
    })
  }

  it('refuses at connect time, so a name checked earlier cannot rebind to loopback', async () => {
    // A rebinding name answers a public address to the save-time check and 127.0.0.1 to the
    // connection; without a DNS server, sending to localhost with no check first shows that the
    // address refused is the one resolved for the socket.
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await sendWebhook({ url: `http://localhost:${receiver.port}/`, body, headers })
      expect(result.error).toMatch(/^address .* is loopback$/)
    }
    expect(receiver.received).toHaveLength(0)
  })

  it('a keep-alive socket opened while private addresses were allowed is not reused when they are not', async () => {
    const url = `http://localhost:${receiver.port}/`
    expect((await sendWebhook({ url, body, headers, allowPrivate: true })).ok).toBe(true)
    const refused = await sendWebhook({ url, body, headers })
    expect(refused.error).toMatch(/is loopback$/)
    expect(receiver.received).toHaveLength(1)
  })
})

describe('checkWebhookUrl', () => {
  const check = (url: string) => checkWebhookUrl(url, { allowPrivate: false })

  it('refuses what is not an absolute http(s) URL without credentials', async () => {
    expect(await check('ftp://example.com/hook')).toBe('URL must be http(s)')
    expect(await check('/hooks/1')).toBe('not an absolute URL')
    expect(await check('example.com/hook')).toBe('not an absolute URL')
    expect(await check('https://user:pass@93.184.216.34/hook')).toMatch(/credentials/)
    expect(await check('https://user@93.184.216.34/hook')).toMatch(/credentials/)
    expect(await check(`https://93.184.216.34/${'a'.repeat(2048)}`)).toMatch(/longer than 2048/)
    expect(await check(`https://93.184.216.34/${'a'.repeat(2048 - 'https://93.184.216.34/'.length)}`)).toBe(
      undefined,
    )
  })

  it('refuses private, loopback, link-local and other non-public hosts', async () => {
    const refused: [string, RegExp][] = [
      ['http://localhost/', /loopback/],
      ['http://LOCALHOST./', /loopback/],
      ['http://api.localhost:3000/', /loopback/],
      ['http://127.0.0.1/', /address 127\.0\.0\.1 is loopback/],
      ['http://127.1/', /loopback/],
      ['http://2130706433/', /loopback/],
      ['http://10.1.2.3/', /address 10\.1\.2\.3 is private/],
      ['http://192.168.1.1/', /private/],
      ['http://172.16.0.1/', /private/],
      ['http://172.31.255.255/', /private/],
      ['http://100.64.0.1/', /private \(carrier-grade NAT\)/],
      ['http://0.0.0.0/', /unspecified/],
      ['http://169.254.169.254/', /link-local/],
      ['http://224.0.0.1/', /multicast/],
      ['http://[::1]/', /address ::1 is loopback/],
      ['http://[::]/', /unspecified/],
      ['http://[fd00::1]/', /private \(unique local\)/],
      ['http://[fe80::1]/', /link-local/],
      ['http://[::ffff:127.0.0.1]/', /loopback/],
      ['http://[::ffff:10.0.0.1]/', /private/],
      ['http://[2001:db8::1]/', /not public/],
    ]
    for (const [url, reason] of refused) expect(await check(url), url).toMatch(reason)
  })

  it('accepts public IP literals without DNS, and 172.32/16 (outside 172.16/12)', async () => {
    expect(await check('https://93.184.216.34/hook')).toBeUndefined()
    expect(await check('http://172.32.0.1:8080/hook')).toBeUndefined()
    expect(await check('https://[2606:4700::1111]/hook')).toBeUndefined()
    expect(await check('https://[::ffff:93.184.216.34]/hook')).toBeUndefined()
  })

  it('refuses a name that does not resolve', async () => {
    expect(await check('https://no-such-host.invalid/hook')).toMatch(/does not resolve/)
  })

  it('accepts any well-formed URL with allowPrivate, still refusing bad forms', async () => {
    const allow = (url: string) => checkWebhookUrl(url, { allowPrivate: true })
    expect(await allow('http://localhost:3000/hook')).toBeUndefined()
    expect(await allow('http://10.0.0.1/')).toBeUndefined()
    expect(await allow('http://[::1]/')).toBeUndefined()
    expect(await allow('https://no-such-host.invalid/hook')).toBeUndefined()
    expect(await allow('ftp://10.0.0.1/')).toBe('URL must be http(s)')
    expect(await allow('http://a:b@10.0.0.1/')).toMatch(/credentials/)
  })
})

describe('isPublicAddress', () => {
  it('IPv4', () => {
    expect(isPublicAddress('93.184.216.34')).toBe(true)
    expect(isPublicAddress('8.8.8.8')).toBe(true)
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '240.0.0.1',
    ]) {
      expect(isPublicAddress(address), address).toBe(false)
    }
  })

  it('IPv6, IPv4-mapped unwrapped', () => {
    expect(isPublicAddress('2606:4700::1111')).toBe(true)
    expect(isPublicAddress('::ffff:93.184.216.34')).toBe(true)
    for (const address of ['::1', '::', 'fd00::1', 'fc00::1', 'fe80::1', 'ff02::1', '2001:db8::1']) {
      expect(isPublicAddress(address), address).toBe(false)
    }
    for (const address of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
    ]) {
      expect(isPublicAddress(address), address).toBe(false)
    }
  })

  it('what is not an address is not public', () => {
    expect(isPublicAddress('localhost')).toBe(false)
    expect(isPublicAddress('')).toBe(false)
    expect(isPublicAddress('999.1.1.1')).toBe(false)
  })
})
