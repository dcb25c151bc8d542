// The accounts: partners, their organizations, users and memberships. The rows every other domain
// reads (access checks, keys, billing), kept apart from the organization services that use them.
import { stampColumns } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

export interface PartnerRow {
  id: string
  name: string
  created_at: string
  updated_at: string
}

export type ProductType = 'standard' | 'plus_employee'

export interface OrganizationRow {
  id: string
  name: string
  domain: string
  product_type: ProductType
  is_agency: boolean
  agency_id: string | null
  partner_id: string | null
  max_overages: number | null
  auto_phone_enrichment: boolean
  created_by_user_id: string | null
  created_at: string
  updated_at: string
}

export interface UserRow {
  id: string
  email: string
  name: string
  created_at: string
  updated_at: string
}

export interface MembershipRow {
  organization_id: string
  user_id: string
  role: 'owner' | 'member'
  created_at: string
  updated_at: string
}

export const partnersTable: EntityDefinition<PartnerRow> = {
  table: 'partners',
  key: ['id'],
  columns: { id: 'UUID', name: 'String', ...stampColumns },
}

export const organizationsTable: EntityDefinition<OrganizationRow> = {
  table: 'organizations',
  key: ['id'],
  columns: {
    id: 'UUID',
    name: 'String',
    domain: 'String',
    product_type: 'String',
    is_agency: 'Bool',
    agency_id: 'Nullable(UUID)',
    partner_id: 'Nullable(UUID)',
    max_overages: 'Nullable(Float64)',
    auto_phone_enrichment: 'Bool',
    created_by_user_id: 'Nullable(UUID)',
    ...stampColumns,
  },
}

export const usersTable: EntityDefinition<UserRow> = {
  table: 'users',
  key: ['id'],
  columns: { id: 'UUID', email: 'String', name: 'String', ...stampColumns },
}

export const membershipsTable: EntityDefinition<MembershipRow> = {
  table: 'memberships',
  key: ['organization_id', 'user_id'],
  columns: { organization_id: 'UUID', user_id: 'UUID', role: 'String', ...stampColumns },
}
