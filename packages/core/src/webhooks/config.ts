// Partner webhook configuration (docs/decisions.md, "Partner webhooks"): each partner's URL, secret
// and switch per kind, read, updated (the URL checked, the secret sealed with SECRET_KEY) and
// presented without the secret.
import type { Config } from '../config.js'
import type { Coordination } from '../coordination/ports.js'
import { appError } from '../errors.js'
import type { Repositories } from '../repositories.js'
import { secretBox } from '../secret-box/secret-box.js'
import type { Store } from '../store/client.js'
import { checkWebhookUrl } from './http-sender.js'
import type { WebhookConfigRow } from './rows.js'

export const webhookKinds = ['identification', 'billing'] as const
export type WebhookKind = (typeof webhookKinds)[number]

export interface WebhookDeps {
  store: Store
  repos: Repositories
  coordination: Coordination
  settings: Config['webhooks']
}

const now = () => new Date().toISOString()

/** The partner's webhook of this kind, as stored (none: undefined); from memory (the read model). */
export async function readWebhookConfig(
  repos: Pick<Repositories, 'webhookConfigs'>,
  partnerId: string,
  kind: WebhookKind,
): Promise<WebhookConfigRow | undefined> {
  const row = await repos.webhookConfigs.get({ partner_id: partnerId, kind })
  return row && { ...row, enabled: Boolean(row.enabled) }
}

/** Where a sealed secret belongs: a secret copied to another partner's row does not open there. */
const secretContext = (partnerId: string, kind: WebhookKind) => `webhook:${partnerId}:${kind}`

/**
 * The secret to sign with. With SECRET_KEY set, secrets are stored sealed (`v1.` + AES-256-GCM);
 * a secret saved before SECRET_KEY was set is still plain, and is sealed at the next change.
 */
export function signingSecret(settings: WebhookDeps['settings'], row: WebhookConfigRow): string {
  if (!row.secret.startsWith('v1.')) return row.secret
  if (!settings.secretKey) throw new Error('the webhook secret is sealed but SECRET_KEY is not set')
  return secretBox(settings.secretKey).open(row.secret, secretContext(row.partner_id, row.kind))
}

/** What the API shows of a webhook: never the secret. */
export function presentWebhookConfig(row: WebhookConfigRow | undefined) {
  return { url: row?.url ?? '', enabled: row?.enabled ?? false, hasSecret: Boolean(row?.secret) }
}

export interface WebhookConfigChange {
  url?: string | undefined
  secret?: string | undefined
  enabled?: boolean | undefined
}

/**
 * Applies the given fields (the others keep their value). A URL is checked on save (http(s), no
 * credentials, and no private, loopback or link-local address unless WEBHOOK_ALLOW_PRIVATE): a 400
 * naming `url` with the reason. An empty URL removes it (and the webhook is then disabled).
 */
export async function updateWebhookConfig(
  deps: WebhookDeps,
  partnerId: string,
  kind: WebhookKind,
  change: WebhookConfigChange,
): Promise<WebhookConfigRow> {
  if (change.url) {
    const problem = await checkWebhookUrl(change.url, { allowPrivate: deps.settings.allowPrivate })
    if (problem) {
      throw appError('invalid_request', `url: ${problem}`, { issues: [{ path: 'url', message: problem }] })
    }
  }
  const current = await readWebhookConfig(deps.repos, partnerId, kind)
  const url = change.url ?? current?.url ?? ''
  const plain = change.secret ?? (current ? signingSecret(deps.settings, current) : '')
  const key = deps.settings.secretKey
  const row: WebhookConfigRow = {
    partner_id: partnerId,
    kind,
    url,
    secret: key && plain ? secretBox(key).seal(plain, secretContext(partnerId, kind)) : plain,
    enabled: url === '' ? false : (change.enabled ?? current?.enabled ?? true),
    created_at: current?.created_at ?? now(),
    updated_at: now(),
  }
  await deps.repos.webhookConfigs.save(row)
  return row
}
