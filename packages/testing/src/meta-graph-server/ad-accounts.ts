// The ad account edges: the user's ad accounts (GET /me/adaccounts, cursor paging as the Graph API
// pages) and a new customer-file custom audience on one (POST /act_{id}/customaudiences).
import { invalidParameter, missingPermission, termsNotAccepted, unsupported } from './errors.js'
import { type AdAccountRecord, type MetaGraphState, newObjectId, type TokenRecord } from './state.js'

const accountFields = new Set(['id', 'name', 'account_id'])
/** Graph's page size when the request names no `limit`. */
const defaultLimit = 25

const cursorOf = (index: number) => Buffer.from(`index:${index}`).toString('base64url')
const indexOf = (cursor: string) => {
  const match = /^index:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString())
  if (!match) throw invalidParameter('The after cursor is not valid')
  return Number(match[1])
}

export function listAdAccounts(
  state: MetaGraphState,
  token: TokenRecord,
  params: Record<string, string>,
  pageUrl: (query: Record<string, string>) => string,
) {
  if (!token.scopes.includes('ads_management') && !token.scopes.includes('ads_read')) {
    throw missingPermission('ads_management or ads_read')
  }
  const fields = (params.fields ?? 'id').split(',').map((field) => field.trim())
  const unknown = fields.find((field) => !accountFields.has(field))
  if (unknown)
    throw invalidParameter(`Tried accessing nonexisting field (${unknown}) on node type (AdAccount)`)
  const limit = params.limit === undefined ? defaultLimit : Number(params.limit)
  if (!Number.isInteger(limit) || limit < 1) throw invalidParameter('limit must be a positive integer')
  const start = params.after ? indexOf(params.after) + 1 : 0
  const page = state.accounts.slice(start, start + limit)
  const data = page.map((account) => renderAccount(account, fields))
  if (page.length === 0) return { data, paging: {} }
  const last = start + page.length - 1
  const cursors = { before: cursorOf(start), after: cursorOf(last) }
  const more = last + 1 < state.accounts.length
  // As Meta does, `next` repeats the request's query, the token included.
  const next = more ? { next: pageUrl({ ...params, limit: String(limit), after: cursors.after }) } : {}
  return { data, paging: { cursors, ...next } }
}

function renderAccount(account: AdAccountRecord, fields: string[]) {
  const all = { id: `act_${account.accountId}`, name: account.name, account_id: account.accountId }
  return Object.fromEntries(Object.entries(all).filter(([field]) => field === 'id' || fields.includes(field)))
}

const customerFileSources = ['USER_PROVIDED_ONLY', 'PARTNER_PROVIDED_ONLY', 'BOTH_USER_AND_PARTNER_PROVIDED']

/** The user's ad account of an `act_<digits>` node, or Meta's "unsupported request". */
export function adAccountOf(state: MetaGraphState, node: string, method: string): AdAccountRecord {
  const account = state.accounts.find((a) => `act_${a.accountId}` === node)
  if (!account) throw unsupported(method, node)
  return account
}

export function createCustomAudience(
  state: MetaGraphState,
  token: TokenRecord,
  node: string,
  params: Record<string, string>,
) {
  const account = adAccountOf(state, node, 'POST')
  if (!token.scopes.includes('ads_management')) throw missingPermission('ads_management')
  if (!account.termsAccepted) throw termsNotAccepted(account.accountId)
  if (!params.name) throw invalidParameter('The parameter name is required')
  // This fake makes customer-file audiences only: the one kind the adapter creates.
  if (params.subtype !== 'CUSTOM')
    throw invalidParameter('Param subtype must be CUSTOM for a customer file audience')
  const source = params.customer_file_source
  if (!source || !customerFileSources.includes(source)) {
    throw invalidParameter(`Param customer_file_source must be one of {${customerFileSources.join(', ')}}`)
  }
  const id = newObjectId()
  state.audiences.set(id, {
    id,
    accountId: account.accountId,
    name: params.name,
    description: params.description,
    subtype: params.subtype,
    customerFileSource: source,
    members: new Set(),
  })
  return { id }
}
