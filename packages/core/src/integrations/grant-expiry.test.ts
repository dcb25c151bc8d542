// The expiry of a stored grant and the status it gives, on a fixed clock: the pure helper and what
// the integrations list shows with it.
import { describe, expect, it } from 'vitest'
import type { Config } from '../config.js'
import { grantExpiresAt, integrationStatus, reconnectMarginMs, type StoredGrant } from './grant-expiry.js'
import type { IntegrationRow, IntegrationType } from './integration-store.js'
import { presentIntegrations } from './integrations.js'
import { metaReconnectMarginMs } from './meta-custom-audiences.js'

const day = 24 * 3600_000
const now = Date.parse('2026-07-01T12:00:00.000Z')
const at = (ms: number) => new Date(ms).toISOString()
/** A grant without a refresh token (Meta's long-lived token) ending at `expiresAt`. */
const meta = (expiresAt: number, status: StoredGrant['status'] = 'connected'): StoredGrant => ({
  status,
  refresh_token: '',
  expires_at: at(expiresAt),
})

describe('grantExpiresAt', () => {
  it('is the stored expiry of a grant without a refresh token, else null', () => {
    expect(grantExpiresAt(meta(now + 3 * day))).toBe('2026-07-04T12:00:00.000Z')
    expect(
      grantExpiresAt({ status: 'connected', refresh_token: 'v1.sealed', expires_at: at(now + 3600_000) }),
    ).toBeNull()
    expect(grantExpiresAt({ status: 'connected', refresh_token: '', expires_at: null })).toBeNull()
  })
})

describe('integrationStatus', () => {
  it('asks to reconnect within 7 days of the end, needs it once past, and is connected before', () => {
    expect(reconnectMarginMs).toBe(7 * day)
    expect(metaReconnectMarginMs).toBe(reconnectMarginMs)
    expect(integrationStatus(meta(now + 60 * day), now)).toBe('connected')
    expect(integrationStatus(meta(now + 7 * day + 1), now)).toBe('connected')
    expect(integrationStatus(meta(now + 7 * day), now)).toBe('reconnect_soon')
    expect(integrationStatus(meta(now + 3 * day), now)).toBe('reconnect_soon')
    expect(integrationStatus(meta(now + 1), now)).toBe('reconnect_soon')
    expect(integrationStatus(meta(now), now)).toBe('reauthorization_required')
    expect(integrationStatus(meta(now - day), now)).toBe('reauthorization_required')
    // The same grant, as the clock moves.
    const grant = meta(now + 10 * day)
    expect([0, 4, 9, 10].map((days) => integrationStatus(grant, now + days * day))).toEqual([
      'connected',
      'reconnect_soon',
      'reconnect_soon',
      'reauthorization_required',
    ])
  })

  it('a grant with a refresh token or without an expiry never asks; a recorded refusal stands', () => {
    const refreshing = { status: 'connected', refresh_token: 'v1.sealed', expires_at: at(now - day) } as const
    expect(integrationStatus(refreshing, now)).toBe('connected')
    expect(integrationStatus({ status: 'connected', refresh_token: '', expires_at: null }, now)).toBe(
      'connected',
    )
    expect(integrationStatus(meta(now + 60 * day, 'reauthorization_required'), now)).toBe(
      'reauthorization_required',
    )
    expect(integrationStatus({ ...refreshing, status: 'reauthorization_required' }, now)).toBe(
      'reauthorization_required',
    )
  })

  it('takes another margin', () => {
    expect(integrationStatus(meta(now + 3 * day), now, day)).toBe('connected')
    expect(integrationStatus(meta(now + 3 * day), now, 3 * day)).toBe('reconnect_soon')
  })
})

describe('presentIntegrations', () => {
  const settings = { secretKey: 'k', audienceBatchSize: 1000 } as unknown as Config['integrations']
  const row = (type: IntegrationType, grant: StoredGrant): IntegrationRow => ({
    organization_id: '0190a0a0-0000-7000-8000-000000000001',
    type,
    access_token: 'v1.sealed',
    scope: '',
    ads_accounts: [],
    selected_account_id: '',
    consent: null,
    connected_at: at(now - 50 * day),
    updated_at: at(now - 50 * day),
    ...grant,
  })

  it("shows each type's status and expiresAt at the clock given", () => {
    const rows = new Map<IntegrationType, IntegrationRow>([
      ['searchAds', row('searchAds', { status: 'connected', refresh_token: 'v1.r', expires_at: at(now) })],
      ['socialAds', row('socialAds', meta(now + 3 * day))],
    ])
    const shown = (clock: number) =>
      presentIntegrations(settings, rows, clock).map(({ type, status, expiresAt }) => ({
        type,
        status,
        expiresAt,
      }))
    expect(shown(now)).toEqual([
      { type: 'searchAds', status: 'connected', expiresAt: null },
      { type: 'socialAds', status: 'reconnect_soon', expiresAt: '2026-07-04T12:00:00.000Z' },
    ])
    expect(shown(now - 30 * day)[1]!.status).toBe('connected')
    expect(shown(now + 4 * day)[1]!.status).toBe('reauthorization_required')
    // Not installed: no grant, no expiry.
    expect(presentIntegrations(settings, new Map(), now)[1]).toMatchObject({
      status: 'not_installed',
      expiresAt: null,
      installed: false,
    })
  })
})
