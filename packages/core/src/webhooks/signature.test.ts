import { execFileSync } from 'node:child_process'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { serviceSignature, verifyServiceSignature, webhookHeaders } from './signature.js'

// Known answers come from outside Node's crypto (openssl and python3), and the Standard Webhooks
// headers are checked by a verifier written here from that spec, itself checked against the
// spec's published example, so a shared mistake in the module and the test cannot pass unseen.

const body = Buffer.from(
  JSON.stringify({
    event_type: 'visitor.identified',
    visitor: { city: 'Zürich' },
    company: { name: 'Acme' },
  }),
)
// Not ASCII, so the vectors prove the key is the secret's UTF-8 bytes.
const secret = 'whs-sécret-ü-42'

/** `openssl dgst -sha256 -hmac`, the command a partner would reach for. */
const opensslHmacHex = (data: Buffer, key: string) =>
  // OpenSSL 3 prints `SHA2-256(stdin)= <hex>`, 1.1 `(stdin)= <hex>`: the digest is the last word.
  execFileSync('openssl', ['dgst', '-sha256', '-hmac', key], { input: data })
    .toString()
    .trim()
    .split(' ')
    .pop()

/** HMAC-SHA256 by python3's standard library; the key goes through the environment as UTF-8. */
const pythonHmac = (data: Buffer, key: string, encoding: 'hex' | 'base64') =>
  execFileSync(
    'python3',
    [
      '-c',
      'import base64,hashlib,hmac,os,sys\n' +
        'd=hmac.new(os.environb[b"KEY"],sys.stdin.buffer.read(),hashlib.sha256).digest()\n' +
        'print(d.hex() if sys.argv[1]=="hex" else base64.b64encode(d).decode())',
      encoding,
    ],
    { input: data, env: { ...process.env, KEY: key } },
  )
    .toString()
    .trim()

/**
 * A Standard Webhooks verifier written from the spec: the key is the base64 part of a `whsec_`
 * secret, the signed content `id.timestamp.body`, the header a space-separated list of
 * `v1,<base64>` of which one must match.
 */
function standardWebhooksVerify(whsecSecret: string, headers: Record<string, string>, payload: Buffer) {
  const key = Buffer.from(whsecSecret.replace(/^whsec_/, ''), 'base64')
  const content = Buffer.concat([
    Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.`),
    payload,
  ])
  const expected = createHmac('sha256', key).update(content).digest()
  return (headers['webhook-signature'] ?? '').split(' ').some((entry) => {
    const [version, signature] = entry.split(',')
    if (version !== 'v1' || signature === undefined) return false
    const given = Buffer.from(signature, 'base64')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

describe('serviceSignature', () => {
  it('is the lowercase hex HMAC-SHA256 of the raw body keyed with the UTF-8 secret (openssl, python3)', () => {
    const signature = serviceSignature(body, secret)
    expect(signature).toMatch(/^[0-9a-f]{64}$/)
    expect(signature).toBe(opensslHmacHex(body, secret))
    expect(signature).toBe(pythonHmac(body, secret, 'hex'))
    // a string body is signed as its UTF-8 bytes, the same as the Buffer
    expect(serviceSignature(body.toString('utf8'), secret)).toBe(signature)
  })

  it('matches a fixed vector (RFC 4231 test case 2)', () => {
    expect(serviceSignature('what do ya want for nothing?', 'Jefe')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })
})

describe('verifyServiceSignature', () => {
  const good = serviceSignature(body, secret)

  it('accepts the signature of the body, in either hex case', () => {
    expect(verifyServiceSignature(body, secret, good)).toBe(true)
    expect(verifyServiceSignature(body.toString(), secret, good.toUpperCase())).toBe(true)
  })

  it('rejects a tampered body, another secret or another signature', () => {
    const tampered = Buffer.from(body.toString().replace('Acme', 'Acmf'))
    expect(verifyServiceSignature(tampered, secret, good)).toBe(false)
    expect(verifyServiceSignature(body, `${secret}x`, good)).toBe(false)
    const flipped = (good[0] === 'a' ? 'b' : 'a') + good.slice(1)
    expect(verifyServiceSignature(body, secret, flipped)).toBe(false)
  })

  it('answers false, not a throw, for a signature of another length', () => {
    // timingSafeEqual throws on buffers of different lengths; the length check comes first
    expect(verifyServiceSignature(body, secret, good.slice(0, -1))).toBe(false)
    expect(verifyServiceSignature(body, secret, `${good}0`)).toBe(false)
    expect(verifyServiceSignature(body, secret, '')).toBe(false)
    expect(verifyServiceSignature(body, secret, 'é'.repeat(32))).toBe(false)
  })
})

describe('webhookHeaders', () => {
  const base = { body, secret, eventId: 'evt_01J9Z3', eventType: 'visitor.identified' }

  it('sends the event id and type, the service signature and the Standard Webhooks headers', () => {
    const headers = webhookHeaders({ ...base, timestamp: 1_700_000_000 })
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'visitor-id-webhooks/1',
      'x-service-event-id': 'evt_01J9Z3',
      'x-service-event-type': 'visitor.identified',
      'x-service-signature': opensslHmacHex(body, secret),
      'webhook-id': 'evt_01J9Z3',
      'webhook-timestamp': '1700000000',
      'webhook-signature': `v1,${pythonHmac(Buffer.concat([Buffer.from('evt_01J9Z3.1700000000.'), body]), secret, 'base64')}`,
    })
  })

  it('passes a Standard Webhooks verifier given whsec_ + base64(secret), and only that', () => {
    // the verifier itself first, on the example of the Standard Webhooks spec
    const example = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    }
    const examplePayload = Buffer.from('{"test": 2432232314}')
    expect(standardWebhooksVerify('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', example, examplePayload)).toBe(
      true,
    )
    expect(standardWebhooksVerify('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx', example, examplePayload)).toBe(
      false,
    )

    const headers = webhookHeaders(base)
    const whsec = `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`
    expect(standardWebhooksVerify(whsec, headers, body)).toBe(true)
    expect(standardWebhooksVerify(whsec, headers, Buffer.from(body.toString().replace('Acme', 'Acmf')))).toBe(
      false,
    )
    expect(standardWebhooksVerify(whsec, { ...headers, 'webhook-timestamp': '1' }, body)).toBe(false)
    expect(standardWebhooksVerify(whsec, { ...headers, 'webhook-id': 'evt_other' }, body)).toBe(false)
    // the plain secret is not a Standard Webhooks secret: its base64 decoding is other bytes
    expect(standardWebhooksVerify(secret, headers, body)).toBe(false)
  })

  it('stamps the current time in whole seconds by default, and truncates a fraction', () => {
    const before = Math.floor(Date.now() / 1000)
    const stamped = Number(webhookHeaders(base)['webhook-timestamp'])
    expect(stamped).toBeGreaterThanOrEqual(before)
    expect(stamped).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
    expect(webhookHeaders({ ...base, timestamp: 1_700_000_000.9 })['webhook-timestamp']).toBe('1700000000')
  })

  it('keeps the event id across attempts while each attempt gets its own timestamp and signature', () => {
    const first = webhookHeaders({ ...base, timestamp: 1_700_000_000 })
    const retry = webhookHeaders({ ...base, timestamp: 1_700_000_060 })
    expect(retry['x-service-event-id']).toBe(first['x-service-event-id'])
    expect(retry['webhook-id']).toBe(first['webhook-id'])
    expect(retry['x-service-signature']).toBe(first['x-service-signature'])
    expect(retry['webhook-signature']).not.toBe(first['webhook-signature'])
  })

  it('sends no signature headers at all without a secret', () => {
    expect(webhookHeaders({ ...base, secret: '' })).toEqual({
      'content-type': 'application/json',
      'user-agent': 'visitor-id-webhooks/1',
      'x-service-event-id': 'evt_01J9Z3',
      'x-service-event-type': 'visitor.identified',
    })
  })
})
