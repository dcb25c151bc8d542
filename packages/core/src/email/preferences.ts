// Email preferences (spec: "Email preferences"; docs/decisions.md, "Email"): which lifecycle emails an
// organization gets. A partner's values are the defaults of the organizations it manages; an
// organization's own value wins; every key is enabled when nobody set it.
import { nextVersion } from '../ids.js'
import type { Store } from '../store/client.js'

export const emailPreferenceKeys = [
  'credits_exhausted',
  'credits_low',
  'first_visitor_identified',
  'subscription_activated',
  'subscription_canceled',
  'payment_failed',
  'renewal_receipt',
  'integration_reconnect',
] as const
export type EmailPreferenceKey = (typeof emailPreferenceKeys)[number]

export type PreferenceValues = Partial<Record<EmailPreferenceKey, boolean>>

const partnerOwner = (partnerId: string) => `partner:${partnerId.toLowerCase()}`
const organizationOwner = (organizationId: string) => `organization:${organizationId.toLowerCase()}`

async function readValues(store: Store, owner: string): Promise<PreferenceValues> {
  const rows = await store.query<{ key: EmailPreferenceKey; enabled: boolean | number }>(
    'SELECT key, enabled FROM email_preferences FINAL WHERE owner = {owner:String}',
    { owner },
  )
  return Object.fromEntries(rows.map((row) => [row.key, Boolean(row.enabled)]))
}

async function writeValues(store: Store, owner: string, values: PreferenceValues): Promise<void> {
  const at = new Date().toISOString()
  const rows = Object.entries(values).map(([key, enabled]) => ({
    owner,
    key,
    enabled,
    updated_at: at,
    version: nextVersion(),
    is_deleted: 0,
  }))
  if (rows.length > 0) await store.insert('email_preferences', rows)
}

/** The partner's defaults, every key present (unset keys: enabled). */
export async function partnerEmailPreferences(
  store: Store,
  partnerId: string,
): Promise<Record<EmailPreferenceKey, boolean>> {
  const values = await readValues(store, partnerOwner(partnerId))
  return Object.fromEntries(emailPreferenceKeys.map((key) => [key, values[key] ?? true])) as Record<
    EmailPreferenceKey,
    boolean
  >
}

/** Sets some of the partner's defaults; the keys left out keep their value. */
export async function updatePartnerEmailPreferences(
  store: Store,
  partnerId: string,
  values: PreferenceValues,
) {
  await writeValues(store, partnerOwner(partnerId), values)
}

export interface EffectivePreference {
  enabled: boolean
  /** True when the value is the partner's default (the organization set none). */
  inherited: boolean
}

/**
 * The organization's effective preferences: its own values, else its partner's defaults (none:
 * enabled). `partnerId` is the partner managing the organization, if any.
 */
export async function organizationEmailPreferences(
  store: Store,
  organizationId: string,
  partnerId: string | undefined,
): Promise<Record<EmailPreferenceKey, EffectivePreference>> {
  const [own, defaults] = await Promise.all([
    readValues(store, organizationOwner(organizationId)),
    partnerId ? partnerEmailPreferences(store, partnerId) : undefined,
  ])
  return Object.fromEntries(
    emailPreferenceKeys.map((key) => [
      key,
      own[key] === undefined
        ? { enabled: defaults?.[key] ?? true, inherited: true }
        : { enabled: own[key], inherited: false },
    ]),
  ) as Record<EmailPreferenceKey, EffectivePreference>
}

/** Sets some of the organization's own values; the keys left out keep theirs. */
export async function updateOrganizationEmailPreferences(
  store: Store,
  organizationId: string,
  values: PreferenceValues,
) {
  await writeValues(store, organizationOwner(organizationId), values)
}

/** Drops every value the organization set: it follows its partner's defaults again. */
export async function resetOrganizationEmailPreferences(store: Store, organizationId: string): Promise<void> {
  const at = new Date().toISOString()
  await store.insert(
    'email_preferences',
    emailPreferenceKeys.map((key) => ({
      owner: organizationOwner(organizationId),
      key,
      enabled: true,
      updated_at: at,
      version: nextVersion(),
      is_deleted: 1,
    })),
  )
}
