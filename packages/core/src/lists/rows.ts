import { stampColumns, timeColumn } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

/** A saved list (migration 0011): its filter and the figures of its last refresh. */
export interface ListRow {
  /** `list_` + 24 hex (docs/decisions.md, "Ids"). */
  id: string
  organization_id: string
  name: string
  /** The filter as JSON (the list vocabulary). */
  filter: string
  /** The count the caller saw when saving (`contacts_found`), kept as given. */
  contacts_found: number
  contacts_num: number
  matched_contacts_num: number
  /** Distinct enriched-email hashes of the snapshot: the export's `X-Unique-Email-Count`. */
  enriched_emails: number
  /** Refreshed every 24 hours by the worker. */
  auto_update: boolean
  /** Set while a refresh runs (its lease): the list shows `syncing` until then. */
  refreshing_until: string | null
  /** The `list_members` snapshot of the last refresh; '' before the first. */
  snapshot: string
  last_synced_at: string | null
  connected_integration: string | null
  created_at: string
  updated_at: string
}

export const listsTable: EntityDefinition<ListRow> = {
  table: 'lists',
  key: ['organization_id', 'id'],
  columns: {
    id: 'String',
    organization_id: 'UUID',
    name: 'String',
    filter: 'String',
    contacts_found: 'UInt64',
    contacts_num: 'UInt64',
    matched_contacts_num: 'UInt64',
    enriched_emails: 'UInt64',
    auto_update: 'Bool',
    refreshing_until: `Nullable(${timeColumn})`,
    snapshot: 'String',
    last_synced_at: `Nullable(${timeColumn})`,
    connected_integration: 'Nullable(String)',
    ...stampColumns,
  },
}
