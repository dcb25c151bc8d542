// Finding an account's user list by its name, for a list name Google says is taken
// (DISPLAY_NAME_ALREADY_USED): the sync reuses the Customer Match list it (or an earlier flow of the
// same list) made before, instead of failing for good. Data Manager's ListUserLists:
//   GET {api}/accountTypes/GOOGLE_ADS/accounts/{id}/userLists?filter=display_name = "..."&pageSize=...
// answers `{ userLists: [UserList], nextPageToken }` (each omitted when empty). The filter's string
// is in double quotes with `"` and `\` escaped by a backslash; the match is checked again here,
// exactly, whatever the filter's own rules of comparison.
import { type GoogleHttp, googleCall } from './google-data-manager-http.js'

/** Lists per page; a name is unique in an account, so one page is the rule. */
const pageSize = 100
/** Pages read at most, in case the answers never end. */
const maxPages = 20

export interface FoundUserList {
  id: string
  /** Whether it is a Customer Match list of contact information, which this server fills. */
  contactList: boolean
  /** Its description ('' when it has none). */
  description: string
}

/** The `filter` value matching the display name exactly: `display_name = "list \"1\""`. */
export const displayNameFilter = (displayName: string) =>
  `display_name = "${displayName.replace(/[\\"]/g, (c) => `\\${c}`)}"`

/** The account's user list named exactly `displayName`, if any. */
export async function userListNamed(
  http: GoogleHttp,
  token: string,
  listsUrl: string,
  displayName: string,
): Promise<FoundUserList | undefined> {
  const query = new URLSearchParams({ filter: displayNameFilter(displayName), pageSize: String(pageSize) })
  let pageToken = ''
  for (let page = 0; page < maxPages; page++) {
    const paged = pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''
    const answer = await googleCall<{ userLists?: unknown; nextPageToken?: unknown }>(http, token, {
      method: 'GET',
      // %20 for spaces: Google's reference writes its query strings so.
      url: `${listsUrl}?${query.toString().replace(/\+/g, '%20')}${paged}`,
    })
    const lists = Array.isArray(answer.userLists) ? (answer.userLists as UserListFields[]) : []
    const found = lists.find((list) => list?.displayName === displayName)
    if (found) return foundList(found)
    if (typeof answer.nextPageToken !== 'string' || !answer.nextPageToken) return undefined
    pageToken = answer.nextPageToken
  }
  return undefined
}

interface UserListFields {
  name?: unknown
  id?: unknown
  displayName?: unknown
  description?: unknown
  readOnly?: unknown
  ingestedUserListInfo?: { uploadKeyTypes?: unknown }
}

function foundList(list: UserListFields): FoundUserList | undefined {
  const fromName = typeof list.name === 'string' ? /\/userLists\/(\d+)$/.exec(list.name)?.[1] : undefined
  const id = fromName ?? (list.id !== undefined && list.id !== null ? String(list.id) : '')
  if (!/^\d+$/.test(id)) return undefined
  const keys = list.ingestedUserListInfo?.uploadKeyTypes
  const contactList = list.readOnly !== true && Array.isArray(keys) && keys.includes('CONTACT_ID')
  const description = typeof list.description === 'string' ? list.description : ''
  return { id, contactList, description }
}
