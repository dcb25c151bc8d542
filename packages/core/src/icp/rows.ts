import { stampColumns } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

/**
 * An ICP config (migration 0006). Organization-level configs (`kind: 'organization'`) hold a
 * filter, compiled to engine rules when scored; partner-level configs hold their rules. Slugs are
 * unique per organization across both kinds.
 */
export interface IcpConfigRow {
  id: string
  organization_id: string
  kind: 'organization' | 'partner'
  slug: string
  /** The organization config's name, or the partner config's label. */
  name: string
  /** Organization configs: the filter as JSON; '' for partner configs. */
  filter: string
  /** Partner configs: the rules as JSON (parseRules input); '' for organization configs. */
  rules: string
  priority: number
  is_active: boolean
  created_at: string
  updated_at: string
}

export const icpConfigsTable: EntityDefinition<IcpConfigRow> = {
  table: 'icp_configs',
  key: ['organization_id', 'id'],
  columns: {
    id: 'String',
    organization_id: 'UUID',
    kind: 'String',
    slug: 'String',
    name: 'String',
    filter: 'String',
    rules: 'String',
    priority: 'Int32',
    is_active: 'Bool',
    ...stampColumns,
  },
}
