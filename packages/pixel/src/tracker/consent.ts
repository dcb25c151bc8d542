// Consent, as consent-management platforms signal it: the Google Consent Mode v2 fields a site
// passes to gtag('consent', ...). `denied` is a live binding: the tracker and the storage read it
// at each hit, so a grant or a denial applies from the next hit on.
/**
 * Consent denied, as the wire's bits; undefined (every bit clear, and left out of the hit) until
 * the site configures consent, so a site without consent configuration sends what it always did.
 */
export let denied = undefined as unknown as number

/**
 * Applies `analytics_storage` (storage, bit 1) and `ad_user_data` (identification, bit 2), each
 * 'granted' or 'denied'; a field left out keeps its state.
 */
export function consent(fields?: Record<string, unknown>): void {
  // biome-ignore lint/suspicious/useIterableCallbackReturn: map() is forEach() in fewer bytes.
  ;[fields!.analytics_storage, fields!.ad_user_data].map((value, bit) => {
    // biome-ignore lint/suspicious/noDoubleEquals: one byte less, and both are strings.
    if (value) denied = (denied & ~++bit) | (+(value == 'denied') * bit)
  })
}
