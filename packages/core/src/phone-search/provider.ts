// The phone provider port (docs/decisions.md, "Phone search"): who finds a person's phone. A search runs as
// a job and asks its provider once per try; the provider answers at once, or later through a
// callback or when polled. Adapters: `dataset` (the contacts dataset, the default) and `http` (a
// generic enrichment API), chosen by PHONE_PROVIDER.
import { parsePhoneNumberFromString } from 'libphonenumber-js'

/** The person a search looks for. */
export interface PhoneLookup {
  /** The search's id: stable across tries, so a provider may deduplicate on it. */
  searchId: string
  organizationId: string
  visitorId: string
  /** Always set: a search needs a LinkedIn URL (`no_linkedin` otherwise). */
  linkedinUrl: string
  email: string
  firstName: string
  lastName: string
  /** The contacts dataset row the visitor was identified as ('' when identified by email alone). */
  contactId: string
  /** Where an asynchronous provider posts its answer (set when callbacks are configured). */
  callbackUrl?: string | undefined
}

/**
 * What a try found:
 * - `found`: the phone, in E.164 (`toE164` below);
 * - `not_found`: the provider has no phone for this person (never retried, by anyone);
 * - `pending`: the answer comes later (callback or polling);
 * - `retry`: a transient failure (rate limited, out of provider credit, 5xx, network): tried again
 *   with backoff, `retryAfterMs` when the provider said how long to wait;
 * - `error`: a permanent failure (bad configuration, an answer that cannot be read).
 */
export type PhoneOutcome =
  | { status: 'found'; phone: string }
  | { status: 'not_found' }
  | { status: 'pending' }
  | { status: 'retry'; reason: string; retryAfterMs?: number | undefined }
  | { status: 'error'; reason: string }

export interface PhoneProvider {
  readonly name: string
  /** The first try of a search (and every retry). */
  lookup(request: PhoneLookup): Promise<PhoneOutcome>
  /** Polling providers: asks again about a pending search. */
  poll?(request: PhoneLookup): Promise<PhoneOutcome>
  /** Callback providers: the outcome a callback's JSON body carries. */
  parseCallback?(body: unknown): PhoneOutcome
}

/**
 * A phone number in E.164 (`+14155552671`), or undefined when it is not a valid number. Numbers
 * without a country code are read as `defaultCountry` (ISO 3166 alpha-2) when given.
 * @example toE164('(415) 555-2671', 'US') // '+14155552671'
 */
export function toE164(raw: string, defaultCountry?: string): string | undefined {
  const parsed = parsePhoneNumberFromString(
    raw.trim(),
    defaultCountry ? { defaultCountry: defaultCountry.toUpperCase() as never } : undefined,
  )
  return parsed?.isValid() ? parsed.number : undefined
}
