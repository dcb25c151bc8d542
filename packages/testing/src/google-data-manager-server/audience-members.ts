// POST /v1/audienceMembers:ingest and POST /v1/audienceMembers:remove, checked field by field as
// IngestAudienceMembersRequest and RemoveAudienceMembersRequest define them: at most 10 destinations
// and 10,000 members, each member one kind of data (this server keeps `userData`), at most 10
// identifiers a member, the hashes in the request's `encoding` and SHA-256 long, the Customer Match
// terms accepted for an ingestion. A member whose ad user data consent (its own, else the request's)
// is denied is dropped and counted as PROCESSING_ERROR_REASON_DENIED_CONSENT, as Google does.
import { invalidArgument, permissionDenied, requiredField } from './errors.js'
import {
  bool,
  type Consent,
  consent,
  enumValue,
  fieldPath,
  type Json,
  message,
  repeated,
  required,
} from './fields.js'
import { type GoogleState, newRequestId, type RequestStatusState, type UserListState } from './state.js'

export const maxAudienceMembers = 10_000
const maxDestinations = 10
const maxUserIdentifiers = 10

const ingestFields = [
  'destinations',
  'audienceMembers',
  'consent',
  'validateOnly',
  'encoding',
  'encryptionInfo',
  'termsOfService',
]
const removeFields = ['destinations', 'audienceMembers', 'validateOnly', 'encoding', 'encryptionInfo']
const memberFields = [
  'destinationReferences',
  'userData',
  'pairData',
  'mobileData',
  'userIdData',
  'ppidData',
  'compositeData',
  'googleUserIdData',
  'partnerProvidedIdData',
  'consent',
]
const dataFields = memberFields.filter((f) => f !== 'destinationReferences' && f !== 'consent')
const accountTypes = [
  'ACCOUNT_TYPE_UNSPECIFIED',
  'GOOGLE_ADS',
  'DISPLAY_VIDEO_PARTNER',
  'DISPLAY_VIDEO_ADVERTISER',
  'DATA_PARTNER',
  'GOOGLE_ANALYTICS_PROPERTY',
  'GOOGLE_AD_MANAGER_AUDIENCE_LINK',
  'FLOODLIGHT_CONFIG',
]

interface Member {
  hashes: string[]
  consent: Consent
}

export function audienceMembers(state: GoogleState, action: 'ingest' | 'remove', body: unknown): Json {
  const request = message(body, '', action === 'ingest' ? ingestFields : removeFields)
  if (request.encryptionInfo !== undefined) {
    throw invalidArgument(
      'encryption_info',
      'INVALID_ARGUMENT',
      'This test server takes hashed, unencrypted data only.',
    )
  }
  const encoding = enumValue(request.encoding, 'encoding', 'Encoding', [
    'ENCODING_UNSPECIFIED',
    'HEX',
    'BASE64',
  ])
  const requestConsent = consent(request.consent, 'consent')
  const validateOnly = bool(request.validateOnly, 'validate_only')
  const lists = destinations(state, request.destinations)
  const members = readMembers(request.audienceMembers, encoding, requestConsent)
  if (action === 'ingest') termsAccepted(request.termsOfService)
  if (validateOnly) return {}
  const requestId = newRequestId()
  for (const [index, list] of lists.entries()) {
    const status = apply(action, list, members)
    state.statuses.set(`${requestId}#${index}`, {
      ...status,
      requestId,
      destination: (request.destinations as Json[])[index]!,
      processedStatus: status.requestStatus,
      requestStatus: state.holdRequests ? 'PROCESSING' : status.requestStatus,
    })
  }
  return { requestId }
}

/** The user lists the destinations name, each in an account the caller may use. */
function destinations(state: GoogleState, value: unknown): UserListState[] {
  const all = repeated(value, 'destinations')
  if (all.length === 0) throw requiredField('destinations')
  if (all.length > maxDestinations) {
    throw invalidArgument(
      'destinations',
      'TOO_MANY_DESTINATIONS',
      'Maximum number of destinations allowed per request is 10.',
    )
  }
  return all.map((d, i) => {
    const path = `destinations[${i}]`
    const destination = message(d, path, [
      'reference',
      'loginAccount',
      'linkedAccount',
      'operatingAccount',
      'productDestinationId',
    ])
    if (destination.loginAccount !== undefined || destination.linkedAccount !== undefined) {
      throw invalidArgument(
        path,
        'INVALID_DESTINATION',
        'This test server serves direct access to the operating account only.',
      )
    }
    const accountPath = fieldPath(path, 'operatingAccount')
    if (destination.operatingAccount === undefined) throw requiredField(accountPath)
    const account = message(destination.operatingAccount, accountPath, [
      'product',
      'accountId',
      'accountType',
    ])
    const accountType = enumValue(
      account.accountType,
      fieldPath(accountPath, 'accountType'),
      'ProductAccount.AccountType',
      accountTypes,
    )
    if (accountType !== 'GOOGLE_ADS') {
      throw invalidArgument(
        fieldPath(accountPath, 'accountType'),
        'INVALID_DESTINATION',
        'This Destination is not valid.',
      )
    }
    const accountId = required(account.accountId, fieldPath(accountPath, 'accountId'))
    const listId = required(destination.productDestinationId, fieldPath(path, 'productDestinationId'))
    const lists = state.accounts.get(accountId)
    if (!lists) throw permissionDenied()
    const list = lists.get(listId)
    if (!list)
      throw invalidArgument(
        fieldPath(path, 'productDestinationId'),
        'INVALID_USER_LIST_ID',
        'User list is not valid.',
      )
    return list
  })
}

function readMembers(value: unknown, encoding: string, requestConsent: Consent): Member[] {
  const all = repeated(value, 'audience_members')
  if (all.length === 0) throw requiredField('audience_members')
  if (all.length > maxAudienceMembers) {
    throw invalidArgument(
      'audience_members',
      'TOO_MANY_AUDIENCE_MEMBERS',
      'Maximum number of audience members allowed per request is 10,000.',
    )
  }
  return all.map((m, i) => {
    const path = `audience_members[${i}]`
    const member = message(m, path, memberFields)
    const kinds = dataFields.filter((f) => member[f] !== undefined)
    if (kinds.length !== 1 || kinds[0] !== 'userData') {
      throw invalidArgument(path, 'INVALID_AUDIENCE_MEMBER', 'This test server takes one userData a member.')
    }
    const own = consent(member.consent, fieldPath(path, 'consent'))
    return {
      hashes: userData(member.userData, fieldPath(path, 'userData'), encoding),
      consent: {
        adUserData:
          own.adUserData === 'CONSENT_STATUS_UNSPECIFIED' ? requestConsent.adUserData : own.adUserData,
        adPersonalization:
          own.adPersonalization === 'CONSENT_STATUS_UNSPECIFIED'
            ? requestConsent.adPersonalization
            : own.adPersonalization,
      },
    }
  })
}

/** The member's hashed emails, lowercase hex whatever the encoding. */
function userData(value: unknown, path: string, encoding: string): string[] {
  const data = message(value, path, ['userIdentifiers'])
  const identifiersPath = fieldPath(path, 'userIdentifiers')
  const identifiers = repeated(data.userIdentifiers, identifiersPath)
  if (identifiers.length === 0) throw requiredField(identifiersPath)
  if (identifiers.length > maxUserIdentifiers) {
    throw invalidArgument(
      identifiersPath,
      'TOO_MANY_USER_IDENTIFIERS',
      'Maximum number of user identifiers allowed per audience member is 10.',
    )
  }
  if (encoding === 'ENCODING_UNSPECIFIED') throw requiredField('encoding')
  return identifiers.map((id, i) => {
    const at = `${identifiersPath}[${i}]`
    const identifier = message(id, at, ['emailAddress', 'phoneNumber', 'address'])
    const set = Object.keys(identifier)
    if (set.length !== 1)
      throw invalidArgument(at, 'INVALID_FORMAT', 'Exactly one identifier must be specified.')
    if (set[0] !== 'emailAddress')
      throw invalidArgument(at, 'INVALID_FORMAT', 'This test server takes hashed emails only.')
    return sha256Of(
      required(identifier.emailAddress, fieldPath(at, 'emailAddress')),
      fieldPath(at, 'emailAddress'),
      encoding,
    )
  })
}

function sha256Of(value: string, path: string, encoding: string): string {
  if (encoding === 'HEX') {
    if (!/^[0-9a-fA-F]*$/.test(value) || value.length % 2 !== 0) {
      throw invalidArgument(path, 'INVALID_HEX_ENCODING', 'The HEX encoded value is malformed.')
    }
    if (value.length !== 64)
      throw invalidArgument(path, 'INVALID_SHA256_FORMAT', 'The SHA256 encoded value is malformed.')
    return value.toLowerCase()
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
    throw invalidArgument(path, 'INVALID_BASE64_ENCODING', 'The base64 encoded value is malformed.')
  }
  const bytes = Buffer.from(value, 'base64')
  if (bytes.length !== 32)
    throw invalidArgument(path, 'INVALID_SHA256_FORMAT', 'The SHA256 encoded value is malformed.')
  return bytes.toString('hex')
}

function termsAccepted(value: unknown): void {
  const terms =
    value === undefined ? {} : message(value, 'terms_of_service', ['customerMatchTermsOfServiceStatus'])
  const status = enumValue(
    terms.customerMatchTermsOfServiceStatus,
    'terms_of_service.customer_match_terms_of_service_status',
    'TermsOfServiceStatus',
    ['TERMS_OF_SERVICE_STATUS_UNSPECIFIED', 'ACCEPTED', 'REJECTED'],
  )
  if (status !== 'ACCEPTED') {
    throw invalidArgument(
      'terms_of_service.customer_match_terms_of_service_status',
      'TERMS_AND_CONDITIONS_NOT_SIGNED',
      'Required terms and conditions are not accepted.',
    )
  }
}

/** Adds or removes the members; the request's status as Google would report it once processed. */
function apply(
  action: 'ingest' | 'remove',
  list: UserListState,
  members: Member[],
): Omit<RequestStatusState, 'requestId' | 'destination' | 'processedStatus'> {
  const userIdentifierCount = members.reduce((n, m) => n + m.hashes.length, 0)
  let denied = 0
  for (const member of members) {
    if (action === 'remove') {
      for (const hash of member.hashes) list.members.delete(hash)
    } else if (member.consent.adUserData === 'CONSENT_DENIED') {
      denied++
    } else {
      for (const hash of member.hashes) list.members.add(hash)
    }
  }
  const requestStatus = denied === 0 ? 'SUCCESS' : denied === members.length ? 'FAILED' : 'PARTIAL_SUCCESS'
  return {
    action,
    recordCount: members.length,
    userIdentifierCount,
    requestStatus,
    errorCounts: denied ? [{ reason: 'PROCESSING_ERROR_REASON_DENIED_CONSENT', recordCount: denied }] : [],
  }
}
