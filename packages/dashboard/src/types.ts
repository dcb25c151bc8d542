// Names for the API's shapes the pages pass around. Each is the OpenAPI document's (api-schema.d.ts,
// through the client's `Answer`): a change there shows here as a type error, not as a wrong page.
import type { Rules } from '@visitor-id/icp-engine'
import type { Answer, ApiPath, ApiPaths } from './api.js'

/** What a GET of a path answers. */
type Got<P extends ApiPath<'get'>> = Answer<'get', P>

/** The query parameters of a GET. */
type Query<P extends ApiPath<'get'>> = NonNullable<ApiPaths[P]['get']>['parameters']['query']

export type Organization = Got<'/organization/list'>[number]
export type Integration = Got<'/integrations/{organizationId}'>[number]
export type VisitorProfile = Got<'/visitor-tracking/{organizationId}/visitors/{visitorId}'>
export type IcpConfig = Got<'/organizations/{organizationId}/icp-configs'>[number]
export type Recalculation = NonNullable<IcpConfig['recalculation']>
export type SavedList = Extract<Got<'/lists/{id}'>, unknown[]>[number]
export type PixelConfig = Got<'/visitor-tracking/{organizationId}'>['pixelConfig']
export type Totals = Got<'/companies/statistic/{organizationId}/total'>
/** A scope a new key may get. */
export type ApiScope = NonNullable<NewKey['scopes']>[number]
type NewKey = NonNullable<
  ApiPaths['/organization/{organizationId}/api-keys']['post']
>['requestBody']['content']['application/json']

type StoredPartnerConfig = Got<'/partner/organizations/{organizationId}/icp-configs'>['icpConfigs'][number]

/** A partner config, its rules a rule set (see `withRules`). */
export type PartnerIcpConfig = Omit<StoredPartnerConfig, 'rules'> & { rules: Rules }

/**
 * Partner configs with their rules as a rule set. The document describes `rules` as any object; they
 * are the rules as sent, which the API accepted only once icp-engine had validated them.
 */
export const withRules = <Config extends { rules: unknown }>(configs: Config[]) =>
  configs as (Omit<Config, 'rules'> & { rules: Rules })[]

/** A row as the dashboard asks for it: every field (see `allFields`). */
export type CompanyRow = Required<Got<'/companies'>['data'][number]>
export type VisitorRow = Required<Got<'/companies/visitors'>['data'][number]>

/** The orders the server sorts companies by. */
export type CompanySortKey = NonNullable<Query<'/companies'>['sort']>

/**
 * A page of statistics rows as answered without `fields`: every field there. The document marks
 * each one optional because `fields` may leave it out; the dashboard never sends `fields`.
 */
export const allFields = <Page extends { data: object[] }>(page: Page) =>
  page as Omit<Page, 'data'> & { data: Required<Page['data'][number]>[] }

/** The organization-level filter (the same vocabulary ICP configs and lists use). */
export type Filter = IcpConfig['filter']
type CompanyFilterKey = keyof NonNullable<Filter['company']>
type ContactFilterKey = keyof NonNullable<Filter['contact']>

/** The filter's criteria, in the order the form shows them. */
export const companyFilterKeys = [
  'industries',
  'company_sizes',
  'employee_size_ranges',
  'domains',
  'countries',
  'regions',
  'cities',
  'revenue_ranges',
] as const satisfies readonly CompanyFilterKey[]
export const contactFilterKeys = [
  'job_titles',
  'seniorities',
  'departments',
  'countries',
] as const satisfies readonly ContactFilterKey[]
