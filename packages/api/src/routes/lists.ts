// Spec section "Lists": saved filters with a snapshot of their members, refreshed on demand or daily,
// and the hashed-email audience export (docs/decisions.md, "Contacts, lists and audiences"). List ids are
// `list_` + 24 hex, which is how `GET /lists/{id}` tells a list from an organization.
import { addressOrganization } from '@visitor-id/core/access'
import { appError } from '@visitor-id/core/errors'
import { filterSchema } from '@visitor-id/core/filters'
import { type AudienceSyncOutcome, lastAudienceSyncs } from '@visitor-id/core/integrations'
import {
  autoUpdateStatus,
  deleteList,
  type ListRow,
  listEmailHashes,
  organizationLists,
  refreshList,
  saveList,
} from '@visitor-id/core/lists'
import { z } from 'zod'
import { bomParam, type CsvColumn, encodeCsv } from '../csv.js'
import { iso } from '../presenters.js'
import { type ApiServices, csvResponse, defineRoute, type Route } from '../route-definition.js'
import { audienceSyncSchema } from '../schemas/audience-sync.js'
import { organizationIdField, pathId, timestamp } from '../schemas/common.js'
import { addressed } from './context.js'

const listSchema = z
  .object({
    id: z.string().describe('`list_` + 24 hex'),
    name: z.string(),
    organizationId: z.string(),
    usedFilter: filterSchema.describe('The filter the members are computed from'),
    contactsNum: z.number().int().describe('Members at the last refresh'),
    matchedContactsNum: z
      .number()
      .int()
      .describe('Members identified as visitors of the organization, at the last refresh'),
    autoUpdateStatus: z
      .enum(['disabled', 'enabled', 'syncing'])
      .describe('`enabled`: refreshed every 24 hours; `syncing` while a refresh runs'),
    lastSyncedTime: timestamp.nullable().describe('The last refresh'),
    connectedIntegration: z
      .string()
      .nullable()
      .describe('The integration type the list syncs to; null until one is connected'),
    lastAudienceSync: audienceSyncSchema
      .nullable()
      .describe("The list's last audience sync (to whichever audience), null before the first"),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .describe('List')

function present(list: ListRow, syncs: Map<string, AudienceSyncOutcome>): z.input<typeof listSchema> {
  return {
    id: list.id,
    name: list.name,
    organizationId: list.organization_id,
    usedFilter: JSON.parse(list.filter) as z.input<typeof filterSchema>,
    contactsNum: list.contacts_num,
    matchedContactsNum: list.matched_contacts_num,
    autoUpdateStatus: autoUpdateStatus(list),
    lastSyncedTime: list.last_synced_at && iso(list.last_synced_at),
    connectedIntegration: list.connected_integration,
    lastAudienceSync: syncs.get(list.id) ?? null,
    createdAt: iso(list.created_at),
    updatedAt: iso(list.updated_at),
  }
}

/** The last audience sync of each of the organization's lists. */
const syncsOf = (services: ApiServices, organizationId: string) =>
  lastAudienceSyncs(services.store, organizationId)

const listParams = z.object({ id: pathId('List id (`list_` + 24 hex)') })
/** The optional body of refresh and delete: an organization id, if given, must be the list's. */
const optionalOrganizationBody = z.strictObject({ organizationId: organizationIdField.optional() }).optional()

const deps = (services: ApiServices) => ({
  store: services.store,
  repos: services.repos,
  locks: services.coordination.locks,
})

/** The resolved list; an `organizationId` that is not the list's makes it 404 like any other. */
function listOf(list: ListRow | undefined, organizationId?: string): ListRow {
  if (!list || (organizationId !== undefined && organizationId.toLowerCase() !== list.organization_id)) {
    throw appError('list_not_found')
  }
  return list
}

const hashColumn: CsvColumn<string> = { header: 'email_sha256', value: (hash) => hash }

const exampleFilter = {
  company: { industries: ['SaaS'], employee_size_ranges: ['51-200', '201-500'] },
  contact: { job_titles: ['CTO', 'VP Engineering'], seniorities: ['c-level', 'vp'], countries: ['US'] },
}

export const listRoutes: Route[] = [
  defineRoute({
    operationId: 'getListsOrList',
    method: 'GET',
    path: '/lists/{id}',
    auth: 'organization',
    scope: 'read',
    tenancy: 'list-or-organization-param',
    tag: 'Lists',
    summary: "An organization's lists, or one list",
    description:
      'The spec gives `GET /lists/{organization_id}` and `GET /lists/{id}` one shape: an id starting ' +
      'with `list_` is a list (answered as that list, with its `usedFilter`), anything else an ' +
      "organization (answered with the array of its lists, newest first). Another organization's " +
      'list is 404 `list_not_found`, like an unknown one.',
    params: listParams,
    response: {
      status: 200,
      description: 'An array of lists for an organization id; the list for a list id',
      schema: z.union([z.array(listSchema), listSchema]),
    },
    errors: ['list_not_found'],
    example: (ids) => ({ params: { id: ids.organizationId } }),
    async handler({ organization, list, services }) {
      if (list) return present(list, await syncsOf(services, list.organization_id))
      const organizationId = addressed(organization).id
      const syncs = await syncsOf(services, organizationId)
      return (await organizationLists(services.repos, organizationId)).map((row) => present(row, syncs))
    },
  }),
  defineRoute({
    operationId: 'saveList',
    method: 'POST',
    path: '/lists/save',
    auth: 'organization',
    scope: 'write',
    tenancy: 'organization-body',
    tag: 'Lists',
    summary: 'Save a list (create, or update the one with this name)',
    description:
      'Saving a name the organization already uses updates that list (its filter, `contacts_found`, ' +
      'and `autoUpdateStatus` when given). Either way the members are computed at once from the ' +
      'filter (the vocabulary of `POST /contacts/count`), so the reply carries real figures. ' +
      '`contacts_found` is the count the caller saw before saving, kept as given.',
    body: z.strictObject({
      organizationId: organizationIdField,
      listName: z.string().trim().min(1).max(200),
      contacts_found: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      filter: filterSchema,
      autoUpdateStatus: z
        .enum(['enabled', 'disabled'])
        .optional()
        .describe('`enabled`: refreshed every 24 hours. Default for a new list: `disabled`'),
    }),
    response: { status: 200, description: 'The created or updated list', schema: listSchema },
    errors: ['conflict'],
    example: (ids) => ({
      body: {
        organizationId: ids.organizationId,
        listName: 'Engineering leaders at SaaS companies',
        contacts_found: 1200,
        filter: exampleFilter,
        autoUpdateStatus: 'enabled',
      },
    }),
    async handler({ organization, body, services }) {
      const list = await saveList(deps(services), addressed(organization).id, {
        name: body.listName,
        filter: body.filter,
        contactsFound: body.contacts_found,
        autoUpdate: body.autoUpdateStatus === undefined ? undefined : body.autoUpdateStatus === 'enabled',
      })
      return present(list, await syncsOf(services, list.organization_id))
    },
  }),
  defineRoute({
    operationId: 'refreshList',
    method: 'POST',
    path: '/lists/refresh/{id}',
    auth: 'organization',
    scope: 'write',
    tenancy: 'list-param',
    tag: 'Lists',
    summary: 'Refresh a list from its stored filter',
    description:
      'Computes the members again (new `lastSyncedTime`, `contactsNum`, `matchedContactsNum`). The ' +
      "body is optional; an `organizationId` in it must be the list's. A refresh already running " +
      'is waited for; a list deleted meanwhile is 404.',
    params: listParams,
    body: optionalOrganizationBody,
    response: { status: 200, description: 'The refreshed list', schema: listSchema },
    errors: ['list_not_found', 'conflict'],
    example: (ids) => ({ params: { id: ids.listId }, body: { organizationId: ids.organizationId } }),
    async handler({ list, body, services }) {
      const refreshed = await refreshList(deps(services), listOf(list, body?.organizationId))
      return present(refreshed, await syncsOf(services, refreshed.organization_id))
    },
  }),
  defineRoute({
    operationId: 'deleteList',
    method: 'DELETE',
    path: '/lists/{id}',
    auth: 'organization',
    scope: 'write',
    tenancy: 'list-param',
    tag: 'Lists',
    summary: 'Delete a list',
    description:
      "200 with no body (the spec's answer). The body is optional; an `organizationId` in it must be " +
      "the list's. A refresh of the list under way finishes first; it never brings the list back.",
    params: listParams,
    body: optionalOrganizationBody,
    response: { status: 200, description: 'Deleted; no body', schema: z.undefined() },
    errors: ['list_not_found', 'conflict'],
    example: (ids) => ({ params: { id: ids.listId } }),
    async handler({ list, body, services }) {
      await deleteList(deps(services), listOf(list, body?.organizationId))
      return undefined
    },
  }),
  defineRoute({
    operationId: 'exportListChatAds',
    method: 'GET',
    path: '/lists/{id}/chat-ads-export',
    auth: 'organization',
    scope: 'read',
    tenancy: 'list-param',
    tag: 'Lists',
    summary: "The list's audience as hashed emails (CSV)",
    description:
      'Header row `email_sha256`, then one lowercase hex SHA-256 per distinct enriched email of the ' +
      "list's members at its last refresh (the business email, else the personal one; trimmed and " +
      'lowercased before hashing), in hash order. `X-Unique-Email-Count` gives their number. Upload ' +
      'the file to the ad platform as a customer list; no plaintext email is ever sent or logged. ' +
      '`organizationId` must be an organization the key may address (else `organization_not_found`) ' +
      "and the list's (else `list_not_found`).",
    params: listParams,
    query: z.object({ organizationId: organizationIdField, bom: bomParam }),
    response: csvResponse('One hashed email per line', {
      'X-Unique-Email-Count': 'The number of hashes in the file (distinct enriched emails)',
    }),
    errors: ['organization_not_found', 'list_not_found', 'no_enriched_emails'],
    example: (ids) => ({ params: { id: ids.listId }, query: { organizationId: ids.organizationId } }),
    async handler({ principal, list, query, services }) {
      await addressOrganization(services.repos, principal, query.organizationId, 'read').catch(() => {
        throw appError('organization_not_found')
      })
      const target = listOf(list, query.organizationId)
      if (target.enriched_emails === 0) {
        throw appError(
          'no_enriched_emails',
          'The list has no enriched emails: refresh it once its members have emails',
        )
      }
      return {
        filename: `${target.name}-email-sha256.csv`,
        body: encodeCsv([hashColumn], listEmailHashes(services.store, target), { bom: query.bom }),
        headers: { 'X-Unique-Email-Count': String(target.enriched_emails) },
      }
    },
  }),
]
