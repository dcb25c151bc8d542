// `keys create`: an organization API key, printed once.
import { parseArgs } from 'node:util'
import { scopes as knownScopes, type Scope } from '@visitor-id/core/access'
import { createApiKey } from '@visitor-id/core/api-keys'
import { type CommandRun, type Out, withRepos } from './command-run.js'
import { UsageError } from './usage.js'

export async function keysCreate(run: CommandRun, args: string[], out: Out) {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
    },
  })
  if (!values.org) throw new UsageError('keys create needs --org ORG_ID')
  const scopes = (values.scopes ?? 'read,write').split(',').map((s) => s.trim())
  const unknown = scopes.filter((s) => !knownScopes.includes(s as Scope))
  if (unknown.length > 0) throw new UsageError(`Unknown scope(s): ${unknown.join(', ')}`)
  const expiresAt = values['expires-at']
  if (expiresAt !== undefined && !(Date.parse(expiresAt) > Date.now())) {
    throw new UsageError('--expires-at must be an ISO 8601 time in the future')
  }
  const result = await withRepos(run, async (repos) => {
    const organization = await repos.organizations
      .get({ id: values.org!.toLowerCase() })
      .catch(() => undefined)
    if (!organization) throw new UsageError(`No organization ${values.org}`)
    const owner = (
      await repos.memberships.find({ organization_id: organization.id, role: 'owner' }, { limit: 1 })
    )[0]
    const { apiKey, plainKey } = await createApiKey(repos, {
      organizationId: organization.id,
      createdByUserId: owner?.user_id ?? null,
      name: values.name ?? 'CLI key',
      scopes,
      expiresAt: expiresAt ? new Date(expiresAt).toISOString() : null,
    })
    return { id: apiKey.id, keyPrefix: apiKey.key_prefix, scopes, plainKey }
  })
  out(JSON.stringify(result, null, 2))
}
