import type { QueryParams } from './client.js'

/** A visitor as one organization knows it: the key of every per-visitor point read. */
export interface VisitorKey {
  organizationId: string
  visitorId: string
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Whether both ids are UUIDs. A batched read casts every key it is given, so a key that is not
 * one would fail the read of every key batched with it: readers answer such a key alone.
 */
export const isVisitorKey = (key: VisitorKey): boolean =>
  uuidPattern.test(key.organizationId) && uuidPattern.test(key.visitorId)

/** The identity of a key (ids in lower case, as the store answers UUIDs). */
export const visitorKeyOf = (key: VisitorKey): string =>
  `${key.organizationId.toLowerCase()}:${key.visitorId.toLowerCase()}`

/**
 * The condition that selects the rows of exactly these (organization, visitor) pairs: per
 * organization, its own visitors only, so batching the reads of several organizations never lets
 * one see another's rows. Both columns lead the sorting keys of the tables it is used on, so the
 * primary index finds the granules, and it may stand in PREWHERE before a FINAL merge.
 * @example const { sql, params } = visitorKeysCondition([{ organizationId, visitorId }])
 */
export function visitorKeysCondition(keys: readonly VisitorKey[]): { sql: string; params: QueryParams } {
  const byOrganization = new Map<string, string[]>()
  for (const key of keys) {
    const organizationId = key.organizationId.toLowerCase()
    const visitorIds = byOrganization.get(organizationId)
    if (visitorIds) visitorIds.push(key.visitorId.toLowerCase())
    else byOrganization.set(organizationId, [key.visitorId.toLowerCase()])
  }
  const params: QueryParams = {}
  const terms = [...byOrganization].map(([organizationId, visitorIds], i) => {
    params[`org${i}`] = organizationId
    params[`visitors${i}`] = visitorIds
    return `(organization_id = {org${i}:UUID} AND visitor_id IN {visitors${i}:Array(UUID)})`
  })
  if (terms.length === 0) return { sql: '0', params }
  return { sql: terms.join(' OR '), params }
}
