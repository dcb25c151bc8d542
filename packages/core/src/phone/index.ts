// Phone search, wired from the configuration: the provider PHONE_PROVIDER names, the timeout, the
// public URL callbacks come back to. Routes, the worker and auto enrichment share these deps.
import type { Config } from '../config.js'
import type { Coordination } from '../coordination/ports.js'
import { AppError } from '../errors.js'
import type { EventJob } from '../events/events.js'
import type { Store } from '../store/client.js'
import type { Repositories } from '../store/entities.js'
import { createDatasetPhoneProvider } from './dataset-provider.js'
import { createHttpPhoneProvider } from './http-provider.js'
import type { PhoneProvider } from './provider.js'
import { type PhoneSearchDeps, readPhoneSearch, startPhoneSearch } from './search.js'

/** The configured provider; `http` without PHONE_HTTP_URL is a start-up error naming it. */
export function createPhoneProvider(config: Config, store: Store): PhoneProvider {
  if (config.phone.provider === 'dataset') return createDatasetPhoneProvider(store)
  const { http } = config.phone
  if (!http.url) throw new Error('PHONE_PROVIDER=http needs PHONE_HTTP_URL')
  if (http.mode === 'poll' && !http.pollUrl) throw new Error('PHONE_HTTP_MODE=poll needs PHONE_HTTP_POLL_URL')
  return createHttpPhoneProvider({
    url: http.url,
    method: http.method,
    authHeader: http.authHeader,
    phonePath: http.phonePath,
    mode: http.mode,
    ...(http.pollUrl ? { pollUrl: http.pollUrl } : {}),
    ...(config.phone.defaultCountry ? { defaultCountry: config.phone.defaultCountry } : {}),
  })
}

/**
 * What phone searches need, built once per process.
 * @example const phone = phoneSearchDeps({ config, store, repos, coordination })
 */
export function phoneSearchDeps(deps: {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
}): PhoneSearchDeps {
  return {
    store: deps.store,
    repos: deps.repos,
    coordination: deps.coordination,
    provider: createPhoneProvider(deps.config, deps.store),
    timeoutMs: deps.config.phone.searchTimeoutMs,
    publicUrl: deps.config.publicUrl,
  }
}

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
