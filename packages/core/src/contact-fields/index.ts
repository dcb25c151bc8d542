// The public face of core's contact-fields domain: what other packages import as @visitor-id/core/contact-fields.
export {
  type ContactField,
  contactFieldDefinitions,
  contactFields,
  type ProfileContact,
  profileContactFields,
  type VisitorContactField,
  visitorContactFields,
} from './contact-fields.js'
