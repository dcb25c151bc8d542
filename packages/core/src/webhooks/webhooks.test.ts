// What the webhook configuration refuses before anything is sent: URLs of private, loopback and
// link-local addresses unless WEBHOOK_ALLOW_PRIVATE (the sender checks again when it connects).
import { randomUUID } from 'node:crypto'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryCoordination } from '../coordination/index.js'
import { createRepositories, type Repositories } from '../repositories.js'
import { secretBox } from '../secret-box/secret-box.js'
import { createStore, type Store } from '../store/client.js'
import { migrate } from '../store/migrate.js'
import { readWebhookConfig, updateWebhookConfig, type WebhookDeps } from './config.js'

const tmp = tempDir('vid-webhooks-')
let store: Store
let repos: Repositories
let deps: (allowPrivate: boolean, secretKey?: string) => WebhookDeps

beforeAll(async () => {
  store = createStore({ database: 'default', dataDir: tmp.dir })
  await migrate(store)
  repos = createRepositories(store)
  const coordination = createMemoryCoordination()
  deps = (allowPrivate, secretKey) => ({
    store,
    repos,
    coordination,
    settings: { retryScheduleMs: [1000], allowPrivate, concurrency: 4, secretKey },
  })
})

afterAll(async () => {
  await store?.close()
  tmp.remove()
})

describe('updateWebhookConfig', () => {
  it('refuses private, loopback and link-local URLs with a reason naming url, unless allowed', async () => {
    const partnerId = randomUUID()
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://localhost/hooks',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/hooks',
      'http://[::1]/hooks',
      'http://[::ffff:192.168.0.1]/hooks',
    ]) {
      await expect(
        updateWebhookConfig(deps(false), partnerId, 'identification', { url }),
        url,
      ).rejects.toMatchObject({
        code: 'invalid_request',
        details: { issues: [{ path: 'url' }] },
      })
    }
    expect(await readWebhookConfig(repos, partnerId, 'identification')).toBeUndefined()
    const saved = await updateWebhookConfig(deps(true), partnerId, 'identification', {
      url: 'http://127.0.0.1:8080/hooks',
      secret: 'a-secret-of-sixteen',
    })
    expect(saved).toMatchObject({ url: 'http://127.0.0.1:8080/hooks', enabled: true })
    // A public address needs no permission; fields left out keep their value.
    const changed = await updateWebhookConfig(deps(false), partnerId, 'identification', {
      url: 'https://93.184.215.14/hooks',
    })
    expect(changed).toMatchObject({
      url: 'https://93.184.215.14/hooks',
      secret: 'a-secret-of-sixteen',
      enabled: true,
    })
    expect(await updateWebhookConfig(deps(false), partnerId, 'identification', { url: '' })).toMatchObject({
      url: '',
      enabled: false,
    })
  })

  it('with SECRET_KEY, the secret is stored sealed for its partner and kind; one saved before is sealed at the next change', async () => {
    const key = 's'.repeat(32)
    const partnerId = randomUUID()
    await updateWebhookConfig(deps(true), partnerId, 'billing', {
      url: 'http://127.0.0.1:8080/billing',
      secret: 'a-plain-secret-of-old',
    })
    expect((await readWebhookConfig(repos, partnerId, 'billing'))?.secret).toBe('a-plain-secret-of-old')
    await updateWebhookConfig(deps(true, key), partnerId, 'billing', { enabled: true })
    const sealed = (await readWebhookConfig(repos, partnerId, 'billing'))!.secret
    expect(sealed).toMatch(/^v1\./)
    expect(sealed).not.toContain('a-plain-secret-of-old')
    expect(secretBox(key).open(sealed, `webhook:${partnerId}:billing`)).toBe('a-plain-secret-of-old')
    // Another change keeps the same secret, sealed again.
    await updateWebhookConfig(deps(true, key), partnerId, 'billing', { url: 'http://127.0.0.1:8081/billing' })
    const resealed = (await readWebhookConfig(repos, partnerId, 'billing'))!.secret
    expect(secretBox(key).open(resealed, `webhook:${partnerId}:billing`)).toBe('a-plain-secret-of-old')
    // Without the key a sealed secret cannot be used: a change that keeps it fails rather than lose it.
    await expect(updateWebhookConfig(deps(true), partnerId, 'billing', { enabled: false })).rejects.toThrow(
      /SECRET_KEY/,
    )
  })
})
