// Phone search: the providers (`dataset`, `http`), the search itself and auto enrichment. Which
// provider a process uses (PHONE_PROVIDER) is decided by the server's composition root.
import { AppError } from '../errors.js'
import type { EventJob } from '../events/events.js'
import { type PhoneSearchDeps, readPhoneSearch, startPhoneSearch } from './search.js'

/**
 * Auto phone enrichment (spec: Organizations): a visitor just identified, of a `plus_employee`
 * organization that enabled it, with a LinkedIn URL, gets a search. The start's own rules apply:
 * skipped below 5 credits, never after `not_found`, never twice at once. Returns whether it started.
 */
export async function autoEnrichPhone(deps: PhoneSearchDeps, event: EventJob): Promise<boolean> {
  if (event.type !== 'visitor.identified' || !event.visitorId) return false
  const organization = await deps.repos.organizations.get({ id: event.organizationId })
  if (!organization?.auto_phone_enrichment || organization.product_type !== 'plus_employee') return false
  if (await readPhoneSearch(deps.store, organization.id, event.visitorId)) return false
  try {
    await startPhoneSearch(deps, { organization, visitorId: event.visitorId, auto: true })
    return true
  } catch (error) {
    // No LinkedIn URL, too few credits, a search already there: nothing to do, by the rules.
    if (error instanceof AppError) return false
    throw error
  }
}

export { createDatasetPhoneProvider, linkedinKey } from './dataset-provider.js'
export { createHttpPhoneProvider, type HttpPhoneProviderOptions } from './http-provider.js'
export { type PhoneLookup, type PhoneOutcome, type PhoneProvider, toE164 } from './provider.js'
export {
  acceptPhoneCallback,
  applyPhoneOutcome,
  type PhoneSearchDeps,
  type PhoneSearchJob,
  type PhoneSearchRow,
  type PhoneSearchStatus,
  type ProfilePhoneFields,
  phoneSearchCost,
  phoneSearchJobName,
  profilePhoneFields,
  readPhoneSearch,
  runPhoneSearchJob,
  type StartPhoneSearchInput,
  startPhoneSearch,
  startPhoneSearchSweep,
  sweepPhoneSearches,
} from './search.js'
export { createPhoneSearchReader, type PhoneSearchReader } from './search-reader.js'
