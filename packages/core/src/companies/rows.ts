// The company rows: imported companies, and those named by their network (ASN, reverse DNS).
import { stampColumns } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

/**
 * A company: imported (`source: 'import'`), the owner of a business ASN (`source: 'asn'`, id
 * `as<number>`) or named by a reverse DNS domain no imported company has (`source: 'dns'`, id `dns:<domain>`).
 */
export interface CompanyRow {
  id: string
  name: string
  domain: string
  industry: string
  size: string
  employee_size_range: string
  revenue_range: string
  linkedin_url: string
  website_url: string
  description: string
  logo_url: string
  address: string
  address_2: string
  city: string
  region: string
  postal_code: string
  country: string
  source: 'import' | 'asn' | 'dns'
  created_at: string
  updated_at: string
}

export const companiesTable: EntityDefinition<CompanyRow> = {
  table: 'companies',
  key: ['id'],
  columns: {
    id: 'String',
    name: 'String',
    domain: 'String',
    industry: 'String',
    size: 'String',
    employee_size_range: 'String',
    revenue_range: 'String',
    linkedin_url: 'String',
    website_url: 'String',
    description: 'String',
    logo_url: 'String',
    address: 'String',
    address_2: 'String',
    city: 'String',
    region: 'String',
    postal_code: 'String',
    country: 'String',
    source: 'String',
    ...stampColumns,
  },
}
