// Row shapes of the imported datasets. Column names are case-insensitive; a few common
// synonyms are accepted (network / range for cidr, company for company_id, website for website_url).
import { z } from 'zod'
import { parseRange } from '../ip/address.js'
import { normalizeDomain } from './domain.js'

type RawRecord = Record<string, string>

const optional = (max: number) => z.string().max(max, `longer than ${max} characters`).default('')

const pick = (record: RawRecord, ...names: string[]) =>
  names.map((name) => record[name]).find((value) => value !== undefined && value !== '')

/** A company IP range row: a CIDR / address / `start-end`, and the company id. */
export const companyIpSchema = z.object({
  cidr: z
    .string()
    .min(1, 'a cidr (or start_ip and end_ip) is required')
    .refine((value) => parseRange(value) !== undefined, 'not a CIDR, address or start-end range'),
  company_id: z.string().min(1, 'company_id is required').max(128),
})

/** Maps synonyms onto the company-ip columns. */
export function normalizeCompanyIp(record: RawRecord): unknown {
  const start = pick(record, 'start_ip', 'ip_start', 'start')
  const end = pick(record, 'end_ip', 'ip_end', 'end')
  return {
    cidr: pick(record, 'cidr', 'network', 'range', 'ip') ?? (start && end ? `${start}-${end}` : ''),
    company_id: pick(record, 'company_id', 'company') ?? '',
  }
}

/** Optional: empty stays empty; anything else must hold a hostname (see normalizeDomain). */
const domain = optional(2048).transform((value, context) => {
  if (value === '') return ''
  const normalized = normalizeDomain(value)
  if (normalized === undefined) {
    context.addIssue({ code: 'custom', message: 'not a domain name such as example.com' })
    return z.NEVER
  }
  return normalized
})

/** A company row; `id` and `name` are required. Unknown columns are ignored. */
export const companySchema = z
  .object({
    id: z.string().min(1, 'id is required').max(128),
    name: z.string().min(1, 'name is required').max(512),
    domain,
    industry: optional(256),
    size: optional(64),
    employee_size_range: optional(64),
    revenue_range: optional(64),
    linkedin_url: optional(2048),
    website_url: optional(2048),
    description: optional(10_000),
    logo_url: optional(2048),
    address: optional(512),
    address_2: optional(512),
    city: optional(256),
    region: optional(256),
    postal_code: optional(32),
    country: optional(64),
  })
  .transform((company) => ({ ...company, source: 'import' as const }))

/** Maps synonyms onto the company columns. */
export function normalizeCompany(record: RawRecord): unknown {
  return {
    ...record,
    id: pick(record, 'id', 'company_id') ?? '',
    website_url: pick(record, 'website_url', 'website') ?? '',
    linkedin_url: pick(record, 'linkedin_url', 'linkedin') ?? '',
  }
}
