import { stampColumns } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

/** An integration flow as stored (migration 0017): `nodes` and `state` are JSON (core integrations/flows.ts). */
export interface StoredFlowRow {
  organization_id: string
  /** `flow_` + 24 hex. */
  id: string
  title: string
  integration_id: string
  trigger: string
  nodes: string
  state: string
  created_at: string
  updated_at: string
}

export const flowsTable: EntityDefinition<StoredFlowRow> = {
  table: 'integration_flows',
  key: ['organization_id', 'id'],
  columns: {
    organization_id: 'UUID',
    id: 'String',
    title: 'String',
    integration_id: 'String',
    trigger: 'String',
    nodes: 'String',
    state: 'String',
    ...stampColumns,
  },
}
