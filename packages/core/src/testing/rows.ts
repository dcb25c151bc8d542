import { newId } from '../ids.js'
import type { OrganizationRow } from '../store/entities.js'

/** A complete organization row with fresh id and timestamps (for tests). */
export function organizationRow(overrides: Partial<OrganizationRow> = {}): OrganizationRow {
  const now = new Date().toISOString()
  return {
    id: newId(),
    name: 'Acme',
    domain: 'acme.test',
    product_type: 'standard',
    is_agency: false,
    agency_id: null,
    partner_id: null,
    max_overages: null,
    auto_phone_enrichment: false,
    created_by_user_id: null,
    created_at: now,
    updated_at: now,
    ...overrides,
  }
}
