// `partner-keys create | list | revoke`: a partner's API keys (never a hash or a full key shown).
import { parseArgs } from 'node:util'
import {
  type ApiKeyRow,
  createPartnerKey,
  listPartnerKeys,
  revokePartnerKey,
} from '@visitor-id/core/api-keys'
import { type CommandRun, type Out, withRepos } from './command-run.js'
import { asUsage, UsageError } from './usage.js'

/** A partner key as the CLI shows it: never the hash, never the full key. */
function shownPartnerKey(row: ApiKeyRow, now = Date.now()) {
  const expired = row.expires_at !== null && Date.parse(row.expires_at) <= now
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    status: row.status === 'active' && expired ? 'expired' : row.status,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  }
}

export async function partnerKeysCommand(run: CommandRun, sub: string | undefined, args: string[], out: Out) {
  const { values } = parseArgs({
    args,
    options: {
      partner: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
      key: { type: 'string' },
    },
  })
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') {
    throw new UsageError('partner-keys needs a command: create, list or revoke')
  }
  const partnerId = values.partner
  if (!partnerId) throw new UsageError(`partner-keys ${sub} needs --partner PARTNER_ID`)
  const takes: Record<typeof sub, string[]> = {
    create: ['partner', 'name', 'scopes', 'expires-at'],
    list: ['partner'],
    revoke: ['partner', 'key'],
  }
  const misplaced = Object.keys(values).filter((option) => !takes[sub].includes(option))
  if (misplaced.length > 0) throw new UsageError(`partner-keys ${sub} takes no --${misplaced.join(', --')}`)
  if (sub === 'revoke' && !values.key) throw new UsageError('partner-keys revoke needs --key KEY_ID')
  const result = await withRepos(run, (repos) =>
    asUsage(async () => {
      if (sub === 'list') return (await listPartnerKeys(repos, partnerId)).map((row) => shownPartnerKey(row))
      if (sub === 'revoke') return shownPartnerKey(await revokePartnerKey(repos, partnerId, values.key!))
      const { apiKey, plainKey } = await createPartnerKey(repos, {
        partnerId,
        name: values.name ?? 'CLI partner key',
        scopes: (values.scopes ?? 'read,write').split(',').map((s) => s.trim()),
        expiresAt: values['expires-at'] ?? null,
      })
      return { ...shownPartnerKey(apiKey), plainKey }
    }),
  )
  out(JSON.stringify(result, null, 2))
}
