// A company as the API shows it (visitor profiles, statistics, webhooks): camelCase fields.
import type { CompanyRow } from './rows.js'

/** The company fields the profile shows, as the webhook `company` object has them, camelCase. */
export interface VisitorCompany {
  id: string
  name: string
  domain: string
  industry: string
  size: string
  employeeSizeRange: string
  revenueRange: string
  linkedinUrl: string
  websiteUrl: string
  description: string
  logoUrl: string
  address: string
  address2: string
  city: string
  region: string
  postalCode: string
  country: string
}

/** A company row as the profile shows it. */
export function presentCompany(row: CompanyRow): VisitorCompany {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    industry: row.industry,
    size: row.size,
    employeeSizeRange: row.employee_size_range,
    revenueRange: row.revenue_range,
    linkedinUrl: row.linkedin_url,
    websiteUrl: row.website_url,
    description: row.description,
    logoUrl: row.logo_url,
    address: row.address,
    address2: row.address_2,
    city: row.city,
    region: row.region,
    postalCode: row.postal_code,
    country: row.country,
  }
}

const emptyCompany = Object.freeze(
  Object.fromEntries(
    [
      'name',
      'domain',
      'industry',
      'size',
      'employeeSizeRange',
      'revenueRange',
      'linkedinUrl',
      'websiteUrl',
      'description',
      'logoUrl',
      'address',
      'address2',
      'city',
      'region',
      'postalCode',
      'country',
    ].map((k) => [k, '']),
  ),
) as Omit<VisitorCompany, 'id'>

/** A company known only by its id (not imported yet): every other field empty. */
export function unknownCompany(id: string): VisitorCompany {
  return { id, ...emptyCompany }
}
