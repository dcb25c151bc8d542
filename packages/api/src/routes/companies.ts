// Spec section "Companies and statistics": who visited, which companies, how many, over time.
// Figures come from the hourly traffic rollup (core analytics); ranges count whole hours.
import {
  type ChartInterval,
  chartIntervalFor,
  companyCsvFields,
  companyStatistics,
  exportCompanyCsv,
  exportVisitorCsv,
  filteredHits,
  type StatisticsQuery,
  statisticsTotals,
  visitorCsvFields,
  visitorStatistics,
  visitorsChart,
} from '@visitor-id/core/analytics'
import { appError } from '@visitor-id/core/errors'
import { organizationIcpConfigs } from '@visitor-id/core/icp'
import { organizationPrivacy, rawDataFrom } from '@visitor-id/core/privacy'
import { z } from 'zod'
import { bomParam, csvText } from '../csv.js'
import { type ApiServices, csvResponse, defineRoute, type Route } from '../route-definition.js'
import {
  audienceQuery,
  chartSchema,
  companySort,
  companyStatisticsFields,
  companyStatisticsPage,
  fieldsQuery,
  project,
  totalsSchema,
  visitorStatisticsFields,
  visitorStatisticsPage,
  withRange,
} from '../schemas/analytics.js'
import { hostname, organizationIdParam, pageOf, paginationQuery, pathId } from '../schemas/common.js'
import { cachedAnswer } from '../statistics-cache.js'
import { addressed } from './context.js'

const tag = 'Companies and statistics'
const organizationQuery = { organizationId: organizationIdParam }
const organizationParams = z.object({ organizationId: organizationIdParam })
const rangeNote =
  'Ranges count whole hours (`from` from the start of its hour, `to` to the end of its hour); ' +
  'default: the last 30 days; at most 366 days.'

/** Range and audience of a statistics request, with the organization's ICP configs (from memory). */
async function statisticsQuery(
  services: ApiServices,
  organizationId: string,
  query: { from: string; to: string; ICPOnly?: boolean | undefined; personaOnly?: boolean | undefined },
): Promise<StatisticsQuery> {
  return {
    organizationId,
    range: { from: query.from, to: query.to },
    configs: await organizationIcpConfigs(services.repos, organizationId),
    icpOnly: query.ICPOnly,
    personaOnly: query.personaOnly,
  }
}

const visitorsQuery = <E extends z.ZodRawShape>(extra: E) =>
  withRange({
    ...organizationQuery,
    ...paginationQuery.shape,
    ...audienceQuery,
    fields: fieldsQuery(visitorStatisticsFields),
    ...extra,
  })

/** The fields `fields` names, in its order (all by default); an unknown one is a 400 listing the valid ones. */
function pickFields<F extends string>(valid: readonly F[], fields: string | undefined): F[] {
  if (fields === undefined) return [...valid]
  const names = [
    ...new Set(
      fields
        .split(',')
        .map((field) => field.trim())
        .filter(Boolean),
    ),
  ]
  const unknown = names.filter((name) => !valid.includes(name as F))
  if (unknown.length > 0 || names.length === 0) {
    throw appError(
      'invalid_request',
      `Unknown field ${unknown.join(', ') || '(none)'}; valid fields: ${valid.join(', ')}`,
    )
  }
  return names as F[]
}

export const companyRoutes: Route[] = [
  defineRoute({
    operationId: 'listCompanyStatistics',
    method: 'GET',
    path: '/companies',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-query',
    tag,
    summary: 'Companies that visited, with their statistics',
    description: `By distinct visitors, then last seen (\`sort\`, \`order\` for the other figures). ${rangeNote}`,
    query: withRange({
      ...organizationQuery,
      ...paginationQuery.shape,
      ICPOnly: audienceQuery.ICPOnly,
      fields: fieldsQuery(companyStatisticsFields),
      ...companySort,
    }),
    response: { status: 200, description: 'A page of companies', schema: companyStatisticsPage },
    errors: [],
    example: (ids) => ({
      query: { organizationId: ids.organizationId, from: '2026-01-01', to: '2026-01-31' },
    }),
    async handler({ organization, query, request, services }) {
      const base = await statisticsQuery(services, addressed(organization).id, query)
      const asked = {
        ...base,
        page: { page: query.page, limit: query.limit },
        ...(query.sort ? { sort: query.sort } : {}),
        order: query.order,
      }
      const result = await cachedAnswer(services.statistics, request, 'companies', asked, () =>
        companyStatistics(services.store, asked),
      )
      return pageOf(project(result.rows, query.fields), query, result.total)
    },
  }),
  defineRoute({
    operationId: 'listVisitorStatistics',
    method: 'GET',
    path: '/companies/visitors',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-query',
    tag,
    summary: 'Visitors, with their contact, company and statistics',
    description: `Last seen first. \`domain\`: only hits of companies with that domain; \`icpSlug\`: only visitors that config matched. ${rangeNote}`,
    query: visitorsQuery({
      domain: hostname.optional().describe('Only hits of companies with this domain'),
      icpSlug: z.string().max(100).optional().describe('Only visitors this ICP config matched'),
    }),
    response: { status: 200, description: 'A page of visitors', schema: visitorStatisticsPage },
    errors: [],
    example: (ids) => ({ query: { organizationId: ids.organizationId, ICPOnly: 'true' } }),
    async handler({ organization, query, request, services }) {
      const base = await statisticsQuery(services, addressed(organization).id, query)
      const asked = {
        ...base,
        page: { page: query.page, limit: query.limit },
        domain: query.domain,
        icpSlug: query.icpSlug,
      }
      const result = await cachedAnswer(services.statistics, request, 'visitors', asked, () =>
        visitorStatistics(services.store, asked),
      )
      return pageOf(project(result.rows, query.fields), query, result.total)
    },
  }),
  defineRoute({
    operationId: 'listCompanyVisitors',
    method: 'GET',
    path: '/companies/{companyId}/visitors',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-query',
    tag,
    summary: 'Visitors of one company',
    description: `The visitors with hits attributed to the company, last seen first; figures of those hits. ${rangeNote}`,
    params: z.object({ companyId: pathId('Company id') }),
    query: visitorsQuery({}),
    response: { status: 200, description: 'A page of visitors', schema: visitorStatisticsPage },
    errors: [],
    example: (ids) => ({ params: { companyId: 'acme' }, query: { organizationId: ids.organizationId } }),
    async handler({ organization, params, query, request, services }) {
      const base = await statisticsQuery(services, addressed(organization).id, query)
      const asked = { ...base, page: { page: query.page, limit: query.limit }, companyId: params.companyId }
      const result = await cachedAnswer(services.statistics, request, 'visitors', asked, () =>
        visitorStatistics(services.store, asked),
      )
      return pageOf(project(result.rows, query.fields), query, result.total)
    },
  }),
  defineRoute({
    operationId: 'getStatisticsTotal',
    method: 'GET',
    path: '/companies/statistic/{organizationId}/total',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag,
    summary: 'Totals over a range',
    description: `Distinct visitors, identified visitors, companies and sessions, page views, average session duration and ICP visitors; \`filtered\`: the hits ingest dropped (bots, automation, foreign origins, privacy signals) on the days of the range, by reason (grain: the UTC day); \`rawDataFrom\`: from when raw data exists under the organization's retention. \`from\` and \`to\` are required; \`timezone\` places date-only bounds. ${rangeNote}`,
    params: organizationParams,
    query: withRange(audienceQuery, { required: true, withTimeZone: true }),
    response: { status: 200, description: 'The totals', schema: totalsSchema },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      query: { from: '2026-01-01', to: '2026-01-31' },
    }),
    async handler({ organization, query, request, services }) {
      const organizationId = addressed(organization).id
      const base = await statisticsQuery(services, organizationId, query)
      const answer = await cachedAnswer(services.statistics, request, 'totals', base, async () => {
        const [totals, filtered] = await Promise.all([
          statisticsTotals(services.store, base),
          filteredHits(services.store, base),
        ])
        return { ...totals, filtered }
      })
      // Outside the cache: the settings change without the tables.
      const retention = await organizationPrivacy(
        services.repos.privacySettings,
        services.config.retention,
        organizationId,
      )
      return { ...answer, rawDataFrom: rawDataFrom(retention.retentionDays, Date.now()) }
    },
  }),
  defineRoute({
    operationId: 'getVisitorsChart',
    method: 'GET',
    path: '/companies/statistic/{organizationId}/visitors/chart',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-param',
    tag,
    summary: 'Distinct visitors over time',
    description:
      'One point per bucket, empty buckets 0: hours up to 2 days, days up to 90 days, else weeks ' +
      '(Monday), or `interval`; buckets and date-only bounds in `timezone` (IANA, default UTC). ' +
      rangeNote,
    params: organizationParams,
    query: withRange(
      {
        ...audienceQuery,
        interval: z.enum(['hour', 'day', 'week']).optional().describe('Bucket size (default from the range)'),
      },
      { required: true, withTimeZone: true },
    ),
    response: { status: 200, description: 'The points, oldest first', schema: chartSchema },
    errors: [],
    example: (ids) => ({
      params: { organizationId: ids.organizationId },
      query: { from: '2026-01-01', to: '2026-01-31', timezone: 'Europe/Paris' },
    }),
    async handler({ organization, query, services }) {
      const base = await statisticsQuery(services, addressed(organization).id, query)
      // At most 366 days: 8,784 hourly points.
      const interval: ChartInterval = query.interval ?? chartIntervalFor(base.range)
      return visitorsChart(services.store, { ...base, interval, timezone: query.timezone })
    },
  }),
  defineRoute({
    operationId: 'downloadStatistics',
    method: 'GET',
    path: '/companies/download',
    auth: 'organization',
    scope: 'read',
    tenancy: 'organization-query',
    tag,
    summary: 'Download statistics as CSV',
    description:
      '`statisticType`: `companies` (one line per company, by id), `visitors` or `companyVisitors` ' +
      '(one line per visitor, by id; `companyVisitors` needs `companyId`). Same filters as the ' +
      'lists; `fields` picks and orders the columns. Streamed (constant memory whatever the row ' +
      `count), RFC 4180, cells that a spreadsheet would run as formulas prefixed with '. ${rangeNote}`,
    query: withRange({
      ...organizationQuery,
      statisticType: z.enum(['companies', 'companyVisitors', 'visitors']).describe('What to download'),
      companyId: pathId('Company id (companyVisitors)').optional(),
      domain: hostname.optional().describe('visitors: only hits of companies with this domain'),
      icpSlug: z.string().max(100).optional().describe('visitors: only visitors this ICP config matched'),
      ...audienceQuery,
      fields: z
        .string()
        .max(1000)
        .optional()
        .describe(
          `Comma-separated columns. companies: ${companyCsvFields.join(', ')}. ` +
            `visitors: ${visitorCsvFields.join(', ')}`,
        ),
      bom: bomParam,
    }),
    response: csvResponse('The statistics, one line per company or visitor, with a header row'),
    errors: [],
    example: (ids) => ({ query: { organizationId: ids.organizationId, statisticType: 'companies' } }),
    async handler({ organization, query, services }) {
      const base = await statisticsQuery(services, addressed(organization).id, query)
      const filename = `${query.statisticType}-${query.from.slice(0, 10)}-${query.to.slice(0, 10)}.csv`
      if (query.statisticType === 'companies') {
        const fields = pickFields(companyCsvFields, query.fields)
        const lines = exportCompanyCsv(services.store, base, fields)
        return { filename, body: csvText(fields, lines, { bom: query.bom }) }
      }
      if (query.statisticType === 'companyVisitors' && query.companyId === undefined) {
        throw appError('invalid_request', 'statisticType companyVisitors needs companyId')
      }
      const fields = pickFields(visitorCsvFields, query.fields)
      const lines = exportVisitorCsv(
        services.store,
        {
          ...base,
          icpSlug: query.icpSlug,
          ...(query.statisticType === 'companyVisitors'
            ? { companyId: query.companyId }
            : { domain: query.domain }),
        },
        fields,
      )
      return { filename, body: csvText(fields, lines, { bom: query.bom }) }
    },
  }),
]
