import { describe, expect, it } from 'vitest'
import { forwardedClient } from './collect-fast-path.js'

describe('forwardedClient (the lean path reads the client as Fastify does with TRUST_PROXY)', () => {
  it('is the leftmost address, spaces around it ignored', () => {
    expect(forwardedClient('203.0.113.9')).toBe('203.0.113.9')
    expect(forwardedClient('203.0.113.9, 10.0.0.1, 10.0.0.2')).toBe('203.0.113.9')
    expect(forwardedClient('  2001:db8::1 ,10.0.0.1')).toBe('2001:db8::1')
  })

  it('skips empty entries; none at all leaves the socket address', () => {
    expect(forwardedClient(' , ,198.51.100.4')).toBe('198.51.100.4')
    expect(forwardedClient('')).toBeUndefined()
    expect(forwardedClient(' , ')).toBeUndefined()
    expect(forwardedClient(undefined)).toBeUndefined()
  })
})
