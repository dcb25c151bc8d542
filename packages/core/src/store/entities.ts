import type { Store } from './client.js'
import type { ReadModel } from './read-model.js'
import { createEntityRepository, type EntityDefinition, type EntityRepository } from './repository.js'

/** Rows as stored (snake_case); timestamps are ISO 8601 strings. */
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

export interface ApiKeyRow {
  id: string
  kind: 'organization' | 'partner'
  organization_id: string | null
  partner_id: string | null
  created_by_user_id: string | null
  name: string
  key_hash: string
  key_prefix: string
  scopes: string[]
  status: 'active' | 'revoked'
  expires_at: string | null
  last_used_at: string | null
  created_at: string
  updated_at: string
}

export interface PixelConfigRow {
  id: string
  organization_id: string
  tracking_key: string
  allowed_referrers: string[]
  verified_domains: string[]
  ip_tracking: boolean
  respect_privacy_signals: boolean
  form_capture: boolean
  icp_settings: string
  created_at: string
  updated_at: string
}

/** The contact fields a visitor takes from its contact (migration 0009), '' when unknown. */
export interface VisitorContactFields {
  /** The contacts dataset row it was identified as; '' when identified by email alone. */
  contact_id: string
  personal_email: string
  phone: string
  facebook_url: string
  twitter_url: string
  photo_url: string
  location: string
  address: string
  address_2: string
  city: string
  state: string
  postal_code: string
  gender: string
  age_range: string
  income_range: string
  net_worth: string
  homeowner: string
  married: string
  children: string
}

/** Every contact field empty: for a visitor known by email alone, or not at all. */
export const blankContactFields: Readonly<VisitorContactFields> = Object.freeze({
  contact_id: '',
  personal_email: '',
  phone: '',
  facebook_url: '',
  twitter_url: '',
  photo_url: '',
  location: '',
  address: '',
  address_2: '',
  city: '',
  state: '',
  postal_code: '',
  gender: '',
  age_range: '',
  income_range: '',
  net_worth: '',
  homeowner: '',
  married: '',
  children: '',
})

export interface VisitorRow extends VisitorContactFields {
  id: string
  organization_id: string
  email: string
  first_name: string
  last_name: string
  job_title: string
  seniority: string
  department: string
  /** The contact's country (from the contacts dataset), not the IP's. */
  country: string
  linkedin_url: string
  company_id: string
  identified_at: string | null
  first_seen_at: string
  last_seen_at: string
  created_at: string
  updated_at: string
}

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

const time = "DateTime64(3, 'UTC')"
const stamps = { created_at: time, updated_at: time } as const

export const partnersTable: EntityDefinition<PartnerRow> = {
  table: 'partners',
  key: ['id'],
  columns: { id: 'UUID', name: 'String', ...stamps },
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
    ...stamps,
  },
}

export const usersTable: EntityDefinition<UserRow> = {
  table: 'users',
  key: ['id'],
  columns: { id: 'UUID', email: 'String', name: 'String', ...stamps },
}

export const membershipsTable: EntityDefinition<MembershipRow> = {
  table: 'memberships',
  key: ['organization_id', 'user_id'],
  columns: { organization_id: 'UUID', user_id: 'UUID', role: 'String', ...stamps },
}

export const apiKeysTable: EntityDefinition<ApiKeyRow> = {
  table: 'api_keys',
  key: ['id'],
  columns: {
    id: 'String',
    kind: 'String',
    organization_id: 'Nullable(UUID)',
    partner_id: 'Nullable(UUID)',
    created_by_user_id: 'Nullable(UUID)',
    name: 'String',
    key_hash: 'String',
    key_prefix: 'String',
    scopes: 'Array(String)',
    status: 'String',
    expires_at: `Nullable(${time})`,
    last_used_at: `Nullable(${time})`,
    ...stamps,
  },
}

export const pixelConfigsTable: EntityDefinition<PixelConfigRow> = {
  table: 'pixel_configs',
  key: ['organization_id'],
  columns: {
    id: 'String',
    organization_id: 'UUID',
    tracking_key: 'String',
    allowed_referrers: 'Array(String)',
    verified_domains: 'Array(String)',
    ip_tracking: 'Bool',
    respect_privacy_signals: 'Bool',
    form_capture: 'Bool',
    icp_settings: 'String',
    ...stamps,
  },
}

export const visitorsTable: EntityDefinition<VisitorRow> = {
  table: 'visitors',
  key: ['organization_id', 'id'],
  columns: {
    id: 'UUID',
    organization_id: 'UUID',
    ...(Object.fromEntries(Object.keys(blankContactFields).map((key) => [key, 'String'])) as Record<
      keyof VisitorContactFields,
      'String'
    >),
    email: 'String',
    first_name: 'String',
    last_name: 'String',
    job_title: 'String',
    seniority: 'String',
    department: 'String',
    country: 'String',
    linkedin_url: 'String',
    company_id: 'String',
    identified_at: `Nullable(${time})`,
    first_seen_at: time,
    last_seen_at: time,
    ...stamps,
  },
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
    ...stamps,
  },
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
    ...stamps,
  },
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
    refreshing_until: `Nullable(${time})`,
    snapshot: 'String',
    last_synced_at: `Nullable(${time})`,
    connected_integration: 'Nullable(String)',
    ...stamps,
  },
}

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
    ...stamps,
  },
}

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
    ...stamps,
  },
}

/** Every entity repository, made once per store by the composition root. */
export interface Repositories {
  partners: EntityRepository<PartnerRow>
  organizations: EntityRepository<OrganizationRow>
  users: EntityRepository<UserRow>
  memberships: EntityRepository<MembershipRow>
  apiKeys: EntityRepository<ApiKeyRow>
  pixelConfigs: EntityRepository<PixelConfigRow>
  icpConfigs: EntityRepository<IcpConfigRow>
  lists: EntityRepository<ListRow>
  webhookConfigs: EntityRepository<WebhookConfigRow>
  flows: EntityRepository<StoredFlowRow>
  visitors: EntityRepository<VisitorRow>
  companies: EntityRepository<CompanyRow>
}

/**
 * Every entity repository, made once per store. With a read model, the small entities (everything
 * but visitors and companies, which grow with traffic and imports) are read from memory.
 * @example const repos = createRepositories(store, readModel); await repos.organizations.get({ id })
 */
export function createRepositories(store: Store, readModel?: ReadModel): Repositories {
  const small = <Row extends object>(definition: EntityDefinition<Row>): EntityRepository<Row> => {
    const repository = createEntityRepository(store, definition)
    return readModel ? readModel.cached(definition, repository) : repository
  }
  return {
    partners: small(partnersTable),
    organizations: small(organizationsTable),
    users: small(usersTable),
    memberships: small(membershipsTable),
    apiKeys: small(apiKeysTable),
    pixelConfigs: small(pixelConfigsTable),
    icpConfigs: small(icpConfigsTable),
    lists: small(listsTable),
    // Read by the event consumer for every event: from memory, like the other configs.
    webhookConfigs: small(webhookConfigsTable),
    flows: small(flowsTable),
    visitors: createEntityRepository(store, visitorsTable),
    // Not from memory: imports and ingest write companies straight to the store, unannounced.
    companies: createEntityRepository(store, companiesTable),
  }
}
