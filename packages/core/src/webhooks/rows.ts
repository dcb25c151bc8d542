import { stampColumns } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

/** A partner's webhook of one kind (migration 0013); `secret` sealed when SECRET_KEY is set. */
export interface WebhookConfigRow {
  partner_id: string
  kind: 'identification' | 'billing'
  url: string
  secret: string
  enabled: boolean
  created_at: string
  updated_at: string
}

export const webhookConfigsTable: EntityDefinition<WebhookConfigRow> = {
  table: 'webhook_configs',
  key: ['partner_id', 'kind'],
  columns: {
    partner_id: 'UUID',
    kind: 'String',
    url: 'String',
    secret: 'String',
    enabled: 'Bool',
    ...stampColumns,
  },
}
