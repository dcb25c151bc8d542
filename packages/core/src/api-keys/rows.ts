import { stampColumns, timeColumn } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

/** An organization or partner API key as stored: its hash, never the key. */
export interface ApiKeyRow {
  id: string
  kind: 'organization' | 'partner'
  organization_id: string | null
  partner_id: string | null
  created_by_user_id: string | null
  name: string
  key_hash: string
  key_prefix: string
  scopes: string[]
  status: 'active' | 'revoked'
  expires_at: string | null
  last_used_at: string | null
  created_at: string
  updated_at: string
}

export const apiKeysTable: EntityDefinition<ApiKeyRow> = {
  table: 'api_keys',
  key: ['id'],
  columns: {
    id: 'String',
    kind: 'String',
    organization_id: 'Nullable(UUID)',
    partner_id: 'Nullable(UUID)',
    created_by_user_id: 'Nullable(UUID)',
    name: 'String',
    key_hash: 'String',
    key_prefix: 'String',
    scopes: 'Array(String)',
    status: 'String',
    expires_at: `Nullable(${timeColumn})`,
    last_used_at: `Nullable(${timeColumn})`,
    ...stampColumns,
  },
}
