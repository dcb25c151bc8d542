import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { normalizeDomain } from './domain.js'
import { companySchema, normalizeCompany } from './schemas.js'

describe('normalizeDomain', () => {
  it.each([
    ['acme.com', 'acme.com'],
    ['  Acme.COM ', 'acme.com'],
    ['www.acme.com', 'acme.com'],
    ['https://www.Acme.example/about?x=1#top', 'acme.example'],
    ['http://acme.co.uk:8080', 'acme.co.uk'],
    ['acme.com/pricing', 'acme.com'],
    ['acme.com.', 'acme.com'],
    ['user@mail.acme.com', 'mail.acme.com'],
    ['sub-domain.acme-corp.io', 'sub-domain.acme-corp.io'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['example.xn--p1ai', 'example.xn--p1ai'],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeDomain(input)).toBe(expected)
  })

  it.each([
    'not a domain',
    'localhost',
    'acme',
    'www.com',
    '192.168.1.1',
    'https://10.0.0.1/x',
    '-acme.com',
    'acme-.com',
    'ac_me.com',
    'acme..com',
    '.acme.com',
    'acme.c0m1',
    'acme.1',
    `${'a'.repeat(64)}.com`,
    `${'abcdefghi.'.repeat(26)}com`,
    '',
    'https://',
    'mailto:someone',
  ])('rejects %j', (input) => {
    expect(normalizeDomain(input)).toBeUndefined()
  })
})

describe('normalizeDomain shortcut', () => {
  it('gives what the long way gives (forced by upper case and spaces)', () => {
    const token = fc.constantFrom('a', 'z', '0', '9', '-', '.', 'www.', 'xn--', 'com', 'example')
    fc.assert(
      fc.property(fc.array(token, { maxLength: 12 }), (tokens) => {
        const host = tokens.join('')
        expect(normalizeDomain(host)).toBe(normalizeDomain(` ${host.toUpperCase()} `))
      }),
      { numRuns: 3000 },
    )
  })
})

describe('company rows', () => {
  const parse = (record: Record<string, string>) => companySchema.safeParse(normalizeCompany(record))

  it('keep an empty domain empty and store others normalized', () => {
    expect(parse({ id: 'a', name: 'A' }).data?.domain).toBe('')
    expect(parse({ id: 'a', name: 'A', domain: '' }).data?.domain).toBe('')
    expect(parse({ id: 'a', name: 'A', domain: 'HTTPS://WWW.A.EXAMPLE/' }).data?.domain).toBe('a.example')
  })

  it('are rejected, with a reason, when the domain is not one', () => {
    const bad = parse({ id: 'a', name: 'A', domain: 'not a domain' })
    expect(bad.success).toBe(false)
    expect(bad.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['domain', 'not a domain name such as example.com'],
    ])
  })
})
