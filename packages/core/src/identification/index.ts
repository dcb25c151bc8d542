// The public face of core's identification domain: what other packages import as @visitor-id/core/identification.
export {
  type ContactRow,
  contactsTable,
  emailKey,
  emailMaxLength,
  emailSha256,
  findContactsByKeys,
  normalizeEmail,
} from './contacts.js'
export {
  createIdentifiedVisitors,
  type IdentifiedVisitors,
  type IdentifiedVisitorsOptions,
} from './identified-visitors.js'
export {
  type IdentifyDeps,
  type IdentifyHit,
  type IdentifyResult,
  identifyVisitors,
} from './identify.js'
export {
  type IdentificationEventType,
  type IdentificationPayload,
  type IdentificationPayloadInput,
  type IdentifiedVisitor,
  identificationPayload,
} from './payload.js'
