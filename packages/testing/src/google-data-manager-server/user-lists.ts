// /v1/accountTypes/{accountType}/accounts/{account}/userLists:
//   POST  CreateUserList, its body the UserList. Checked as Google documents it for a Customer Match
//         list: `displayName` required and unique in the account, `membershipDuration` whole days
//         (at most 540), `ingestedUserListInfo` with exactly one upload key type. Output-only fields
//         in the body are ignored, as AIP-203 says.
//   GET   ListUserLists: `pageSize` (50 unless set, at most 1000), `pageToken` (valid only with the
//         other parameters of the call that answered it), `filter` (user-list-filter.ts); answers
//         `{ userLists, nextPageToken }`, each omitted when empty as proto3 JSON does.
import { invalidArgument, invalidValue, permissionDenied, requiredField } from './errors.js'
import { enumValue, fieldPath, type Json, message, repeated, required, text } from './fields.js'
import type { GoogleState, UserListState } from './state.js'
import { meets, parseUserListFilter } from './user-list-filter.js'

const userListFields = [
  'name',
  'id',
  'readOnly',
  'displayName',
  'description',
  'membershipStatus',
  'integrationCode',
  'membershipDuration',
  'closingReason',
  'accessReason',
  'accountAccessStatus',
  'sizeInfo',
  'targetNetworkInfo',
  'ingestedUserListInfo',
]
const ingestedInfoFields = [
  'uploadKeyTypes',
  'contactIdInfo',
  'mobileIdInfo',
  'userIdInfo',
  'pairIdInfo',
  'pseudonymousIdInfo',
  'partnerAudienceInfo',
]
const uploadKeyTypes = [
  'UPLOAD_KEY_TYPE_UNSPECIFIED',
  'CONTACT_ID',
  'MOBILE_ID',
  'USER_ID',
  'PAIR_ID',
  'PSEUDONYMOUS_ID',
]
const dataSourceTypes = [
  'DATA_SOURCE_TYPE_UNSPECIFIED',
  'DATA_SOURCE_TYPE_FIRST_PARTY',
  'DATA_SOURCE_TYPE_THIRD_PARTY_CREDIT_BUREAU',
  'DATA_SOURCE_TYPE_THIRD_PARTY_VOTER_FILE',
  'DATA_SOURCE_TYPE_THIRD_PARTY_PARTNER_DATA',
]
const secondsPerDay = 86_400
const maxMembershipDays = 540

/** The account's user lists, or Google's 403 when the token's user has no access to it. */
export function accountLists(state: GoogleState, accountType: string, accountId: string) {
  if (accountType !== 'GOOGLE_ADS') {
    throw invalidArgument(
      'parent',
      'INVALID_RESOURCE_NAME',
      `This test server serves GOOGLE_ADS accounts only.`,
    )
  }
  if (!/^\d{10}$/.test(accountId)) {
    throw invalidArgument(
      'parent',
      'INVALID_RESOURCE_NAME',
      `Invalid account id: ${JSON.stringify(accountId)}`,
    )
  }
  const lists = state.accounts.get(accountId)
  if (!lists) throw permissionDenied()
  return lists
}

export function createUserList(
  state: GoogleState,
  accountType: string,
  accountId: string,
  body: unknown,
): Json {
  const lists = accountLists(state, accountType, accountId)
  const list = message(body, '', userListFields)
  const displayName = required(list.displayName, 'display_name')
  if ([...lists.values()].some((l) => l.resource.displayName === displayName)) {
    throw invalidArgument(
      'display_name',
      'DISPLAY_NAME_ALREADY_USED',
      'The display name is already being used for another user list for the account.',
    )
  }
  const description = text(list.description, 'description')
  const membershipStatus = enumValue(
    list.membershipStatus,
    'membership_status',
    'UserList.MembershipStatus',
    ['MEMBERSHIP_STATUS_UNSPECIFIED', 'OPEN', 'CLOSED'],
  )
  const id = String(state.nextListId++)
  const resource: Json = {
    name: `accountTypes/GOOGLE_ADS/accounts/${accountId}/userLists/${id}`,
    id,
    readOnly: false,
    displayName,
    ...(description !== undefined ? { description } : {}),
    membershipStatus: membershipStatus === 'MEMBERSHIP_STATUS_UNSPECIFIED' ? 'OPEN' : membershipStatus,
    ...(list.integrationCode !== undefined
      ? { integrationCode: text(list.integrationCode, 'integration_code') }
      : {}),
    membershipDuration: membershipDuration(list.membershipDuration),
    accessReason: 'OWNED',
    accountAccessStatus: 'ENABLED',
    sizeInfo: { displayNetworkMembersCount: '0', searchNetworkMembersCount: '0' },
    targetNetworkInfo: { eligibleForDisplay: true, eligibleForSearch: true },
    ingestedUserListInfo: ingestedUserListInfo(list.ingestedUserListInfo),
  }
  const created: UserListState = { id, resource, members: new Set() }
  lists.set(id, created)
  return resource
}

const defaultPageSize = 50
const maxPageSize = 1000

export function listUserLists(
  state: GoogleState,
  accountType: string,
  accountId: string,
  query: Record<string, string>,
): Json {
  for (const name of Object.keys(query)) {
    if (!['pageSize', 'pageToken', 'filter'].includes(name)) {
      throw invalidArgument(
        '',
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${name}": Cannot bind query parameter.`,
      )
    }
  }
  const lists = accountLists(state, accountType, accountId)
  const pageSize = pageSizeOf(query.pageSize)
  const filter = query.filter ?? ''
  const conditions = parseUserListFilter(filter)
  const start = query.pageToken ? offsetOf(query.pageToken, { filter, pageSize: query.pageSize ?? '' }) : 0
  const found = [...lists.values()].map((l) => l.resource).filter((r) => meets(r, conditions))
  const page = found.slice(start, start + pageSize)
  const next = start + pageSize < found.length ? start + pageSize : undefined
  return {
    ...(page.length > 0 ? { userLists: page } : {}),
    ...(next !== undefined
      ? { nextPageToken: pageToken({ offset: next, filter, pageSize: query.pageSize ?? '' }) }
      : {}),
  }
}

function pageSizeOf(value: string | undefined): number {
  if (value === undefined) return defaultPageSize
  if (!/^-?\d+$/.test(value)) throw invalidValue('page_size', 'TYPE_INT32', value)
  const size = Number(value)
  if (size < 0) throw invalidArgument('page_size', 'INVALID_ARGUMENT', 'The page size must not be negative.')
  return size === 0 ? defaultPageSize : Math.min(size, maxPageSize)
}

interface PageState {
  offset: number
  filter: string
  pageSize: string
}

/** An opaque token holding where the next page starts and the parameters it belongs to. */
const pageToken = (page: PageState) => Buffer.from(JSON.stringify(page)).toString('base64url')

function offsetOf(token: string, call: Omit<PageState, 'offset'>): number {
  let page: Partial<PageState> | undefined
  try {
    page = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<PageState>
  } catch {
    page = undefined
  }
  if (!page || typeof page.offset !== 'number') {
    throw invalidArgument('page_token', 'INVALID_ARGUMENT', 'The page token is not valid.')
  }
  if (page.filter !== call.filter || page.pageSize !== call.pageSize) {
    throw invalidArgument(
      'page_token',
      'INVALID_ARGUMENT',
      'The parameters of a paged call must match those of the call that answered the page token.',
    )
  }
  return page.offset
}

/** A Duration in JSON (`"7776000s"`), whole days; unset: the maximum. */
function membershipDuration(value: unknown): string {
  const duration = text(value, 'membership_duration')
  if (duration === undefined) return `${maxMembershipDays * secondsPerDay}s`
  const seconds = /^(\d+)s$/.exec(duration)?.[1]
  if (seconds === undefined || Number(seconds) % secondsPerDay !== 0 || Number(seconds) === 0) {
    throw invalidArgument(
      'membership_duration',
      'INVALID_ARGUMENT',
      'Valid durations are exact multiples of 24 hours (86400 seconds).',
    )
  }
  if (Number(seconds) / secondsPerDay > maxMembershipDays) {
    throw invalidArgument(
      'membership_duration',
      'MEMBERSHIP_DURATION_TOO_LONG',
      'The user list membership duration is too long.',
    )
  }
  return duration
}

function ingestedUserListInfo(value: unknown): Json {
  // The list's data comes from ingestion: a Customer Match list is nothing without this.
  if (value === undefined) throw requiredField('ingested_user_list_info')
  const path = 'ingested_user_list_info'
  const info = message(value, path, ingestedInfoFields)
  const keyPath = fieldPath(path, 'uploadKeyTypes')
  const keys = repeated(info.uploadKeyTypes, keyPath).map((k, i) =>
    enumValue(k, `${keyPath}[${i}]`, 'IngestedUserListInfo.UploadKeyType', uploadKeyTypes),
  )
  if (keys.length !== 1 || keys[0] === 'UPLOAD_KEY_TYPE_UNSPECIFIED') {
    throw invalidArgument(
      keyPath,
      'UNSUPPORTED_USER_LIST_UPLOAD_KEY_TYPES',
      'The uploadKeyTypes list must contain one entry.',
    )
  }
  if (keys[0] !== 'CONTACT_ID') {
    throw invalidArgument(
      keyPath,
      'UNSUPPORTED_USER_LIST_UPLOAD_KEY_TYPES',
      'This test server serves contact lists only.',
    )
  }
  const contactPath = fieldPath(path, 'contactIdInfo')
  const contact =
    info.contactIdInfo === undefined
      ? {}
      : message(info.contactIdInfo, contactPath, ['dataSourceType', 'matchRatePercentage'])
  const dataSourceType = enumValue(
    contact.dataSourceType,
    fieldPath(contactPath, 'dataSourceType'),
    'DataSourceType',
    dataSourceTypes,
  )
  return { uploadKeyTypes: keys, contactIdInfo: { dataSourceType, matchRatePercentage: 0 } }
}
