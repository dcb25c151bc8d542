// Spec section "Visitor tracking": POST /contacts/count, the size of an audience before it is
// saved as a list. The contacts dataset is the operator's (docs/decisions.md, "Identification"), so any
// organization key may count it; the filter is the list vocabulary.
import { filterSchema } from '@visitor-id/core/filters'
import { countContacts } from '@visitor-id/core/lists'
import { z } from 'zod'
import { defineRoute, type Route } from '../route-definition.js'

export const contactRoutes: Route[] = [
  defineRoute({
    operationId: 'countContacts',
    method: 'POST',
    path: '/contacts/count',
    auth: 'organization',
    scope: 'read',
    tenancy: 'caller',
    tag: 'Lists',
    summary: 'Count the contacts a filter matches',
    description:
      'Contacts of the contacts dataset. Each non-empty key is a condition: membership in the listed ' +
      'values, case-insensitive (`job_titles`: a substring of the title); keys combine with AND. ' +
      "Company keys hold for the contact's company (imported, by id or by the contact's company " +
      'domain); contact keys for the contact. No filter: every contact. Unknown keys and wrong types: 400.',
    body: filterSchema,
    response: {
      status: 200,
      description: 'The number of matching contacts',
      schema: z.object({ count: z.number().int() }),
    },
    errors: [],
    example: () => ({
      body: {
        company: { industries: ['SaaS'], employee_size_ranges: ['51-200'], countries: ['US'] },
        contact: { job_titles: ['CTO'], seniorities: ['c-level'] },
      },
    }),
    async handler({ body, services }) {
      return { count: await countContacts(services.store, body) }
    },
  }),
]
