import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import {
  killServerProcess,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// `billing pending | approve` against a running server (default settings: BILLING_PROVIDER=local):
// a sub-organization's write key checks out the B2B plan and confirms it on the checkout page; it
// waits (409 checkout_pending_approval, still standard, no credits) until the operator approves it
// with the CLI, which reaches the server through DATA_DIR/admin.sock.
const data = tempDir('vid-cli-billing-')
let server: ServerProcess | undefined
let boot: BootstrapFile

const cli = (...args: string[]) => runCli(args, { DATA_DIR: data.dir })

async function api(key: string, method: string, route: string, body?: object) {
  const response = await fetch(`${server!.url}/api/v1${route}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

beforeAll(async () => {
  server = await startServerProcess({ DATA_DIR: data.dir })
  boot = JSON.parse(readFileSync(path.join(data.dir, 'bootstrap.json'), 'utf8')) as BootstrapFile
})

afterAll(async () => {
  await killServerProcess(server)
  data.remove()
})

describe('billing approve with a server running', () => {
  it('a confirmed B2B checkout waits; billing approve makes the organization plus_employee with the credits', async () => {
    const created = await api(boot.apiKey, 'POST', '/organization', { organizationName: 'Waiting Co' })
    expect(created.status).toBe(200)
    const organizationId = String(created.body.id)
    const credits = Number(created.body.identificationCredits)
    const keyed = await api(boot.apiKey, 'POST', `/organization/${organizationId}/api-keys`, {
      name: 'tenant',
      scopes: ['read', 'write'],
    })
    expect(keyed.status, JSON.stringify(keyed.body)).toBe(200)
    const key = String(keyed.body.plainKey)

    const checkout = await api(key, 'POST', '/payment/subscription-checkout', {
      organizationId,
      priceId: 'price_b2b_monthly',
      productId: 'prod_b2b',
    })
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200)
    const pagePath = new URL(String(checkout.body.url)).pathname
    const sessionId = pagePath.split('/').pop()!
    const confirmed = await fetch(`${server!.url}${pagePath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    })
    expect(confirmed.status).toBe(303)

    const process = () => api(key, 'POST', `/payment/subscription-process?secret=${sessionId}`)
    expect((await process()).body).toMatchObject({ statusCode: 409, code: 'checkout_pending_approval' })
    const before = (await api(key, 'GET', `/organization/${organizationId}`)).body
    expect(before).toMatchObject({ productType: 'standard', identificationCredits: credits })

    const pending = await cli('billing', 'pending')
    expect(pending.code, pending.stderr).toBe(0)
    expect(JSON.parse(pending.stdout)).toEqual([
      {
        id: sessionId,
        organizationId,
        planId: 'b2b',
        planName: 'B2B',
        priceId: 'price_b2b_monthly',
        changeOf: null,
        confirmedAt: expect.any(String),
      },
    ])

    const approved = await cli('billing', 'approve', sessionId)
    expect(approved.code, approved.stderr).toBe(0)
    expect(JSON.parse(approved.stdout)).toMatchObject({
      approved: sessionId,
      success: true,
      organizationId,
      subscription: { planId: 'b2b', status: 'active', productType: 'plus_employee', credits: 10000 },
    })
    const after = (await api(key, 'GET', `/organization/${organizationId}`)).body
    expect(after).toMatchObject({ productType: 'plus_employee', identificationCredits: credits + 10000 })
    expect((await process()).status).toBe(200)
    expect(JSON.parse((await cli('billing', 'pending')).stdout)).toEqual([])
  })

  it('refuses bad arguments and unknown sessions with one line', async () => {
    for (const [args, message] of [
      [['billing'], /billing needs a command: pending or approve/],
      [['billing', 'approve'], /billing approve needs one CHECKOUT_SESSION_ID/],
      [['billing', 'pending', 'extra'], /billing pending takes no arguments/],
      [['billing', 'approve', 'cs_local_nope'], /Checkout session not found/],
    ] as const) {
      const result = await cli(...args)
      expect(result.code, result.stderr).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(message)
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
    }
  })
})
