// Issuing keys: an organization's API keys and a partner's keys, stored as hash and prefix only;
// the plain key leaves in the result of its creation and nowhere else.
/** The scopes a partner key may carry: agency scopes belong to agency organizations' keys only. */
export const partnerKeyScopes: readonly Scope[] = ['read', 'write', 'admin']

import { findPartner, type Scope } from '../access/access.js'
import { appError } from '../errors.js'
import { newId } from '../ids.js'
import type { Repositories } from '../repositories.js'
import { issueKey, type KeyKind, keyExpiry } from './keys.js'
import type { ApiKeyRow } from './rows.js'

const now = () => new Date().toISOString()

export interface CreatePartnerKeyInput {
  partnerId: string
  name: string
  /** Among `read`, `write`, `admin`; at least one. */
  scopes: readonly string[]
  /** RFC 3339, in the future and within 10 years; absent or null: never expires. */
  expiresAt?: string | null | undefined
}

/**
 * Creates a key of a partner; the plain key (`bsk_partner_` + 32 hex) is in the result only.
 * Unknown partner: `resource_not_found`; an agency or unknown scope, no scope, an empty name or a
 * bad expiry: `invalid_request`.
 * @example const { apiKey, plainKey } = await createPartnerKey(repos, { partnerId, name: 'ci', scopes: ['read'] })
 */
export async function createPartnerKey(
  repos: Repositories,
  input: CreatePartnerKeyInput,
  nowMs = Date.now(),
) {
  const partner = await findPartner(repos, input.partnerId)
  const invalid = (path: string, message: string) =>
    appError('invalid_request', `${path} ${message}`, { issues: [{ path, message }] })
  const name = input.name.trim()
  if (name.length === 0 || name.length > 100) throw invalid('name', 'must be 1 to 100 characters')
  const scopes = [...new Set(input.scopes)]
  if (scopes.length === 0) throw invalid('scopes', 'must name at least one of read, write, admin')
  for (const scope of scopes) {
    if (scope.startsWith('agency:')) {
      throw invalid(
        'scopes',
        `${scope} is an agency organization's scope; a partner key takes read, write or admin`,
      )
    }
    if (!partnerKeyScopes.includes(scope as Scope)) {
      throw invalid('scopes', `${scope} is not a scope; a partner key takes read, write or admin`)
    }
  }
  const expiresAt = keyExpiry(input.expiresAt, nowMs)
  return saveKey(repos, 'partner', {
    organization_id: null,
    partner_id: partner.id,
    created_by_user_id: null,
    name,
    scopes,
    expires_at: expiresAt,
  })
}

export interface CreateApiKeyInput {
  organizationId: string
  createdByUserId: string | null
  name: string
  scopes: string[]
  expiresAt?: string | null
}

/** Creates an organization API key; the plain key is in the result only. */
export async function createApiKey(repos: Repositories, input: CreateApiKeyInput) {
  return saveKey(repos, 'organization', {
    organization_id: input.organizationId,
    partner_id: null,
    created_by_user_id: input.createdByUserId,
    name: input.name,
    scopes: input.scopes,
    expires_at: input.expiresAt ?? null,
  })
}

type KeyFields = Pick<
  ApiKeyRow,
  'organization_id' | 'partner_id' | 'created_by_user_id' | 'name' | 'scopes' | 'expires_at'
>

/** Issues a key of either kind and stores its row (hash and prefix only). */
async function saveKey(repos: Repositories, kind: KeyKind, fields: KeyFields) {
  const at = now()
  const key = issueKey(kind)
  const row = await repos.apiKeys.save({
    id: `key_${newId().replace(/-/g, '')}`,
    kind,
    ...fields,
    key_hash: key.keyHash,
    key_prefix: key.keyPrefix,
    status: 'active',
    last_used_at: null,
    created_at: at,
    updated_at: at,
  })
  return { apiKey: row, plainKey: key.plainKey }
}
