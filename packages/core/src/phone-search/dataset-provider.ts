// The `dataset` phone provider (the default): the phone of the contacts dataset's row for the
// visitor, by the contact it was identified as, else by its LinkedIn URL. Answers at once.
import type { Store } from '../store/client.js'
import { type PhoneProvider, toE164 } from './provider.js'

/** A LinkedIn URL as compared: lowercased, without scheme, `www.`, query or trailing slash. */
export function linkedinKey(url: string): string {
  return url
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/^www\./, '')
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
}

/**
 * @example const provider = createDatasetPhoneProvider(store)
 */
export function createDatasetPhoneProvider(store: Store): PhoneProvider {
  return {
    name: 'dataset',
    async lookup(request) {
      // By id first (a point read of the primary key); the LinkedIn URL scans the dataset, which
      // only visitors identified by email alone need.
      const byId = request.contactId
        ? await store.query<{ phone: string; country: string }>(
            `SELECT phone, country FROM contacts FINAL WHERE id = {id:String} AND phone != '' LIMIT 1`,
            { id: request.contactId },
          )
        : []
      const rows =
        byId.length > 0
          ? byId
          : await store.query<{ phone: string; country: string }>(
              `SELECT phone, country FROM contacts FINAL
               WHERE phone != '' AND replaceRegexpOne(replaceRegexpOne(replaceRegexpOne(lower(trimBoth(linkedin_url)),
                 '^(https?://)?(www\\\\.)?', ''), '[?#].*$', ''), '/+$', '') = {key:String}
               LIMIT 1`,
              { key: linkedinKey(request.linkedinUrl) },
            )
      const row = rows[0]
      const phone = row && toE164(row.phone, row.country.length === 2 ? row.country : undefined)
      return phone ? { status: 'found', phone } : { status: 'not_found' }
    },
  }
}
