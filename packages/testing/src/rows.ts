import type { OrganizationRow } from '@visitor-id/core/accounts'
import { newId } from '@visitor-id/core/ids'
import { blankContactFields, type VisitorRow } from '@visitor-id/core/visitor-tracking'

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

/**
 * A visitor row of someone identified as a person, with a LinkedIn URL made from the id (for
 * tests of what persons allow: phone searches, auto enrichment).
 */
export function personVisitorRow(
  organizationId: string,
  id: string,
  overrides: Partial<VisitorRow> = {},
): VisitorRow {
  const now = new Date().toISOString()
  return {
    ...blankContactFields,
    id,
    organization_id: organizationId,
    email: `${id.slice(0, 8)}@person.test`,
    first_name: 'Pat',
    last_name: 'Person',
    job_title: 'CTO',
    seniority: 'c-level',
    department: 'engineering',
    country: 'US',
    linkedin_url: `https://www.linkedin.com/in/p-${id.slice(0, 8)}`,
    company_id: '',
    identified_at: now,
    first_seen_at: now,
    last_seen_at: now,
    created_at: now,
    updated_at: now,
    ...overrides,
  }
}
