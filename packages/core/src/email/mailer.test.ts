import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { createServer as createHttpServer } from 'node:http'
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { unsubscribePath, verifyUnsubscribeToken } from './mail-unsubscribe.js'
import {
  createFileMailer,
  createSmtpMailer,
  isPermanentMailError,
  lifecycleMessage,
  type Mailer,
} from './mailer.js'

// Against a real SMTP server on a random local port: what nodemailer puts on the wire is what a
// mailbox provider would receive, read back with mailparser.

const secret = 'test-unsubscribe-secret'
const from = 'Visitor ID <no-reply@visitor-id.test>'
const organizationId = 'org_01TEST'

interface Received {
  envelopeTo: string[]
  parsed: ParsedMail
}

/** An SMTP server on 127.0.0.1, port chosen by the system, keeping every message it accepts. */
async function startSmtpServer(port = 0) {
  const received: Received[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // `bounce-550@...` and `busy-451@...` get that reply, as a real server would answer them.
    onRcptTo(address, _session, callback) {
      const code = /^(?:bounce|busy)-(\d{3})@/.exec(address.address)?.[1]
      if (!code) return callback()
      callback(Object.assign(new Error(`rejected ${address.address}`), { responseCode: Number(code) }))
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            received.push({ envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address), parsed })
            callback()
          },
          (error: Error) => callback(error),
        )
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const address = server.server.address() as AddressInfo
  return {
    received,
    url: `smtp://127.0.0.1:${address.port}`,
    port: address.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** A header's value as sent (unfolded), from mailparser's raw header lines. */
function header(mail: ParsedMail, name: string): string | undefined {
  const line = mail.headerLines.find((entry) => entry.key === name.toLowerCase())?.line
  return line
    ?.slice(line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim()
}

const toAddresses = (mail: ParsedMail) =>
  [mail.to ?? []].flat().flatMap((to) => to.value.map((address) => address.address))

/** The unsubscribe link of each part: the text part's line and the HTML part's href. */
function links(mail: ParsedMail) {
  const text = /Unsubscribe from these emails: (\S+)/.exec(mail.text ?? '')?.[1]
  const href = /<a href="([^"]+)"[^>]*>Unsubscribe from these emails<\/a>/.exec(mail.html || '')?.[1]
  return { text, html: href?.replace(/&amp;/g, '&') }
}

const tokenOf = (url: string) => new URL(url).searchParams.get('token') ?? ''

/** A local port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createTcpServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

let dataDir: string
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'mailer-test-'))
})
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

describe('SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>
  let mailer: Mailer
  beforeAll(async () => {
    smtp = await startSmtpServer()
  })
  afterAll(async () => {
    await smtp.close()
  })
  beforeEach(() => {
    smtp.received.length = 0
    mailer = createSmtpMailer({ smtpUrl: smtp.url, from })
  })
  afterEach(async () => {
    await mailer.close()
  })

  it('delivers one lifecycle message per recipient: subject, from, to, both parts, RFC 8058 headers', async () => {
    const recipients = ['owner@acme.test', 'member@acme.test']
    for (const to of recipients) {
      const sent = await mailer.send(
        lifecycleMessage({
          key: 'first_visitor_identified',
          to,
          organizationId,
          secret,
          publicUrl: 'https://id.example.com/',
          data: {
            organizationName: 'Acme',
            appUrl: 'https://app.example.com',
            visitor: { name: 'Jane Doe', email: 'jane@globex.test', company: 'Globex' },
          },
        }),
      )
      expect(sent.via).toBe('smtp')
      expect(sent.messageId).toMatch(/^<.+@.+>$/)
    }

    expect(smtp.received.map((entry) => entry.envelopeTo)).toEqual([[recipients[0]], [recipients[1]]])
    for (const [index, { parsed }] of smtp.received.entries()) {
      const to = recipients[index]!
      expect(parsed.subject).toBe('Acme: your first visitor is identified')
      expect(parsed.from?.value[0]).toEqual({ name: 'Visitor ID', address: 'no-reply@visitor-id.test' })
      expect(toAddresses(parsed)).toEqual([to])
      expect(parsed.text).toContain('Name: Jane Doe')
      expect(parsed.text).toContain('Company: Globex')
      expect(parsed.text).toContain('See your visitors: https://app.example.com')
      expect(parsed.html).toContain('<td style="padding:2px 0">Jane Doe</td>')
      expect(parsed.html).toContain('<a href="https://app.example.com">See your visitors</a>')

      const listUnsubscribe = header(parsed, 'List-Unsubscribe')
      expect(listUnsubscribe).toMatch(/^<https:\/\/id\.example\.com\/email\/unsubscribe\?token=[\w.-]+>$/)
      expect(header(parsed, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click')

      // The same signed link in the header and in both parts; it names this recipient.
      const url = listUnsubscribe!.slice(1, -1)
      expect(links(parsed)).toEqual({ text: url, html: url })
      expect(verifyUnsubscribeToken(secret, tokenOf(url))).toEqual({
        organizationId,
        key: 'first_visitor_identified',
        email: to,
      })
    }
    // Each recipient has a link of their own.
    const [first, second] = smtp.received.map(({ parsed }) => header(parsed, 'List-Unsubscribe'))
    expect(first).not.toBe(second)
  })

  it('the received link unsubscribes end to end; a tampered one is refused', async () => {
    // What the unsubscribe route does (someone else's module): verify the token and turn the key
    // off. Here it records what it would turn off, reached over HTTP like a mail client would.
    const turnedOff: unknown[] = []
    const route = createHttpServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost')
      let body = ''
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      request.on('end', () => {
        const target = verifyUnsubscribeToken(secret, url.searchParams.get('token') ?? '')
        const oneClick = request.method === 'POST' && body === 'List-Unsubscribe=One-Click'
        if (url.pathname !== unsubscribePath || !oneClick || !target) {
          response.writeHead(400).end()
          return
        }
        turnedOff.push(target)
        response.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => route.listen(0, '127.0.0.1', () => resolve()))
    const publicUrl = `http://127.0.0.1:${(route.address() as AddressInfo).port}`
    try {
      await mailer.send(
        lifecycleMessage({
          key: 'credits_low',
          to: 'owner@acme.test',
          organizationId,
          secret,
          publicUrl,
          data: { organizationName: 'Acme', balance: 90 },
        }),
      )
      const { parsed } = smtp.received[0]!
      const url = header(parsed, 'List-Unsubscribe')!.slice(1, -1)

      // RFC 8058: the client POSTs exactly this body to the List-Unsubscribe URL.
      const post = (target: string) =>
        fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'List-Unsubscribe=One-Click',
        })
      expect((await post(url)).status).toBe(200)
      expect(turnedOff).toEqual([{ organizationId, key: 'credits_low', email: 'owner@acme.test' }])

      // Another key, another organization or a changed signature: all refused.
      const token = tokenOf(url)
      const [payload, signature] = token.split('.') as [string, string]
      const forged = Buffer.from(
        JSON.stringify({ o: 'org_OTHER', k: 'credits_low', e: 'owner@acme.test' }),
      ).toString('base64url')
      const flipped = `${signature.slice(0, -2)}${signature.at(-2) === 'A' ? 'B' : 'A'}${signature.at(-1)}`
      for (const bad of [`${forged}.${signature}`, `${payload}.${flipped}`, payload]) {
        const badUrl = new URL(url)
        badUrl.searchParams.set('token', bad)
        expect(verifyUnsubscribeToken(secret, bad)).toBeUndefined()
        expect((await post(badUrl.toString())).status).toBe(400)
      }
      expect(turnedOff).toHaveLength(1)
    } finally {
      await new Promise<void>((resolve) => route.close(() => resolve()))
    }
  })

  it('escapes every value in the HTML part; the text part and subject keep them as written', async () => {
    const hostile = '<script>alert(1)</script> & "Co"'
    await mailer.send(
      lifecycleMessage({
        key: 'first_visitor_identified',
        to: 'owner@acme.test',
        organizationId,
        secret,
        publicUrl: 'https://id.example.com',
        data: {
          organizationName: hostile,
          visitor: { name: '"><img src=x onerror=alert(1)>', company: "O'Brien & Sons" },
        },
      }),
    )
    const { parsed } = smtp.received[0]!
    const html = parsed.html || ''
    expect(html).not.toContain('<script>')
    expect(html).not.toContain('<img')
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;')
    expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;')
    expect(html).toContain('O&#39;Brien &amp; Sons')
    expect(parsed.subject).toBe(`${hostile}: your first visitor is identified`)
    expect(parsed.text).toContain('Name: "><img src=x onerror=alert(1)>')
    // No appUrl: no dashboard link, the unsubscribe link still there.
    expect(parsed.text).not.toContain('See your visitors')
    expect(links(parsed).html).toMatch(/^https:\/\/id\.example\.com\/email\/unsubscribe\?token=/)
  })
  it('tells a permanent refusal (5xx: do not retry) from a temporary one (4xx: retry)', async () => {
    const send = (to: string) => mailer.send({ to: [to], subject: 'Hi', text: 'Hi', html: '<p>Hi</p>' })
    const permanent = await send('bounce-550@acme.test').catch((error: unknown) => error)
    const temporary = await send('busy-451@acme.test').catch((error: unknown) => error)
    expect(permanent).toBeInstanceOf(Error)
    expect(temporary).toBeInstanceOf(Error)
    expect(isPermanentMailError(permanent)).toBe(true)
    expect(isPermanentMailError(temporary)).toBe(false)
    expect(isPermanentMailError(new Error('connect ECONNREFUSED'))).toBe(false)
    expect(isPermanentMailError(undefined)).toBe(false)
    // The pool is still usable afterwards.
    await expect(send('owner@acme.test')).resolves.toMatchObject({ via: 'smtp' })
  })
})

describe('file mode (no SMTP_URL)', () => {
  it('writes the message as an .eml file under DATA_DIR/mail, owner-only, the same message', async () => {
    const mailer = createFileMailer({ dataDir, from })
    const message = lifecycleMessage({
      key: 'renewal_receipt',
      to: 'owner@acme.test',
      organizationId,
      secret,
      publicUrl: 'https://id.example.com',
      data: { organizationName: 'Acme', plan: 'Growth', amount: { minor: 4900, currency: 'usd' } },
    })
    const sent = await mailer.send(message)
    await mailer.close()

    expect(sent.via).toBe('file')
    expect(path.dirname(sent.file!)).toBe(path.join(dataDir, 'mail'))
    expect(sent.file).toMatch(/\/\d{4}-\d\d-\d\dT[\d-]+Z-[0-9a-f]{12}\.eml$/)
    expect(await readdir(path.join(dataDir, 'mail'))).toEqual([path.basename(sent.file!)])
    expect((await stat(sent.file!)).mode & 0o777).toBe(0o600)
    expect((await stat(path.join(dataDir, 'mail'))).mode & 0o777).toBe(0o700)

    const raw = await readFile(sent.file!)
    expect(raw.includes('\r\n')).toBe(true)
    const parsed = await simpleParser(raw)
    expect(parsed.messageId).toBe(sent.messageId)
    expect(parsed.subject).toBe(message.subject)
    expect(parsed.subject).toBe('Acme: receipt for your Growth subscription')
    expect(toAddresses(parsed)).toEqual(['owner@acme.test'])
    expect(parsed.from?.text).toBe('"Visitor ID" <no-reply@visitor-id.test>')
    expect(parsed.text).toBe(message.text)
    expect(parsed.html).toBe(message.html)
    expect(parsed.text).toContain('Amount: $49.00')
    expect(header(parsed, 'List-Unsubscribe')).toBe(message.headers!['List-Unsubscribe'])
    expect(header(parsed, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click')
    const url = header(parsed, 'List-Unsubscribe')!.slice(1, -1)
    expect(links(parsed)).toEqual({ text: url, html: url })
    expect(verifyUnsubscribeToken(secret, tokenOf(url))?.key).toBe('renewal_receipt')
  })

  it('gives every message its own file', async () => {
    const mailer = createFileMailer({ dataDir, from })
    const message = { to: ['a@acme.test'], subject: 'Hi', text: 'Hi', html: '<p>Hi</p>' }
    const sent = await Promise.all([mailer.send(message), mailer.send(message), mailer.send(message)])
    expect(new Set(sent.map((entry) => entry.file)).size).toBe(3)
    expect((await readdir(path.join(dataDir, 'mail'))).sort()).toEqual(
      sent.map((entry) => path.basename(entry.file!)).sort(),
    )
  })
})

describe('an SMTP outage', () => {
  const message = { to: ['owner@acme.test'], subject: 'Hi', text: 'Hi', html: '<p>Hi</p>' }

  it('rejects at once when nothing listens, writes nothing, and sends again once the server is back', async () => {
    const port = await freePort()
    const mailer = createSmtpMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from })
    try {
      const started = Date.now()
      await expect(mailer.send(message)).rejects.toThrow(/ECONNREFUSED/)
      expect(Date.now() - started).toBeLessThan(10_000)
      await expect(readdir(dataDir)).resolves.toEqual([])

      // The job's retry, once the server is up again, goes through with the same mailer.
      const smtp = await startSmtpServer(port)
      try {
        await expect(mailer.send(message)).resolves.toMatchObject({ via: 'smtp' })
        expect(smtp.received).toHaveLength(1)
      } finally {
        // The mailer first: the server's close waits for the pooled connection to end.
        await mailer.close()
        await smtp.close()
      }
    } finally {
      await mailer.close()
    }
  })

  it('rejects after the timeout when the server accepts the connection but never answers', async () => {
    // A black hole: the TCP connection opens, the SMTP greeting never comes.
    const sockets = new Set<Socket>()
    const silent: Server = createTcpServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()))
    const port = (silent.address() as AddressInfo).port
    const mailer = createSmtpMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from, timeoutMs: 300 })
    try {
      const started = Date.now()
      await expect(mailer.send(message)).rejects.toMatchObject({ code: 'ETIMEDOUT' })
      const elapsed = Date.now() - started
      expect(elapsed).toBeGreaterThanOrEqual(250)
      expect(elapsed).toBeLessThan(5_000)
      await expect(readdir(dataDir)).resolves.toEqual([])
    } finally {
      await mailer.close()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
    }
  })
})
