// The fields of a contact (migration 0007), one entry each. Every list of them derives from here:
// the contacts row and table (identification/contacts.ts), what a visitor takes from its contact
// (visitor-tracking/rows.ts), the visitor profile (visitor-tracking/visitors.ts and the API's
// schema of it), the columns and limits of the contacts import (@visitor-id/ingest). The webhook's
// visitor object (identification/payload.ts) is not a list of them: the spec orders and picks its
// own fields.

interface ContactFieldDefinition {
  /** The column in `contacts` (and in `visitors` when the visitor keeps it): an import file's column name too. */
  column: string
  /** The longest value an import takes: a longer one rejects the row. */
  maxLength: number
  /** Other names an import file may give the column, in order of preference (names are case-insensitive). */
  synonyms?: readonly string[]
  /**
   * The visitor row keeps it once identified as the contact. Not the contact's company: the
   * visitor resolves it into a `company_id` of its own (the contact's, else its sessions').
   */
  onVisitor: boolean
  /** Its name in the visitor profile (camelCase); none when the profile does not show it. */
  shownAs?: string
}

/** Every field of a contact besides its identity (`id`) and the email hashes, in the order of the contacts table. */
export const contactFieldDefinitions = [
  // Normalized, as every email here: trimmed, lowercase.
  {
    column: 'email',
    maxLength: 254,
    synonyms: ['business_email', 'work_email'],
    onVisitor: true,
    shownAs: 'email',
  },
  { column: 'personal_email', maxLength: 254, onVisitor: true, shownAs: 'personalEmail' },
  { column: 'first_name', maxLength: 256, onVisitor: true, shownAs: 'firstName' },
  { column: 'last_name', maxLength: 256, onVisitor: true, shownAs: 'lastName' },
  { column: 'job_title', maxLength: 512, onVisitor: true, shownAs: 'jobTitle' },
  { column: 'seniority', maxLength: 64, onVisitor: true, shownAs: 'seniority' },
  { column: 'department', maxLength: 128, onVisitor: true, shownAs: 'department' },
  // Not in the profile: a phone is paid data, shown as the profile's `phoneNumber` once the
  // organization's own search found it (docs/decisions.md, "Phone search").
  { column: 'phone', maxLength: 64, onVisitor: true },
  {
    column: 'linkedin_url',
    maxLength: 2048,
    synonyms: ['linkedin'],
    onVisitor: true,
    shownAs: 'linkedinUrl',
  },
  {
    column: 'facebook_url',
    maxLength: 2048,
    synonyms: ['facebook'],
    onVisitor: true,
    shownAs: 'facebookUrl',
  },
  { column: 'twitter_url', maxLength: 2048, synonyms: ['twitter'], onVisitor: true, shownAs: 'twitterUrl' },
  { column: 'photo_url', maxLength: 2048, onVisitor: true, shownAs: 'photoUrl' },
  { column: 'location', maxLength: 512, onVisitor: true, shownAs: 'location' },
  { column: 'address', maxLength: 512, onVisitor: true, shownAs: 'address' },
  { column: 'address_2', maxLength: 512, onVisitor: true, shownAs: 'address2' },
  { column: 'city', maxLength: 256, onVisitor: true, shownAs: 'city' },
  { column: 'state', maxLength: 256, onVisitor: true, shownAs: 'state' },
  {
    column: 'postal_code',
    maxLength: 32,
    synonyms: ['zip', 'zip_code'],
    onVisitor: true,
    shownAs: 'postalCode',
  },
  // The contact's country: on a visitor, not the country of its IP.
  { column: 'country', maxLength: 64, onVisitor: true, shownAs: 'country' },
  { column: 'gender', maxLength: 32, onVisitor: true, shownAs: 'gender' },
  { column: 'age_range', maxLength: 64, onVisitor: true, shownAs: 'ageRange' },
  { column: 'income_range', maxLength: 64, onVisitor: true, shownAs: 'incomeRange' },
  { column: 'net_worth', maxLength: 64, onVisitor: true, shownAs: 'netWorth' },
  { column: 'homeowner', maxLength: 32, onVisitor: true, shownAs: 'homeowner' },
  { column: 'married', maxLength: 32, onVisitor: true, shownAs: 'married' },
  { column: 'children', maxLength: 32, onVisitor: true, shownAs: 'children' },
  { column: 'company_id', maxLength: 128, onVisitor: false },
  // A bare lowercase hostname (see normalizeDomain in @visitor-id/ingest).
  { column: 'company_domain', maxLength: 2048, synonyms: ['company_website'], onVisitor: false },
] as const satisfies readonly ContactFieldDefinition[]

type Definition = (typeof contactFieldDefinitions)[number]
type KeptDefinition = Extract<Definition, { onVisitor: true }>
type ShownDefinition = Extract<Definition, { shownAs: string }>

export type ContactField = Definition['column']
/** A contact field the visitor row keeps. */
export type VisitorContactField = KeptDefinition['column']
/** The contact as the visitor profile shows it: every field it shows, null when unknown. */
export type ProfileContact = { [D in ShownDefinition as D['shownAs']]: string | null }

/** The profile fields of a contact, in table order: what an import file may carry besides `id`. */
export const contactFields: readonly ContactField[] = contactFieldDefinitions.map((field) => field.column)

const isKept = (field: Definition): field is KeptDefinition => field.onVisitor
const isShown = (field: Definition): field is ShownDefinition => 'shownAs' in field

/**
 * The definitions in the order of the visitors table: the contacts table's, but for the country,
 * which migration 0006 put right after the department.
 */
function inVisitorOrder<Field extends Definition>(fields: readonly Field[]): Field[] {
  const others = fields.filter((field) => field.column !== 'country')
  const at = others.findIndex((field) => field.column === 'department') + 1
  return [
    ...others.slice(0, at),
    ...fields.filter((field) => field.column === 'country'),
    ...others.slice(at),
  ]
}

/** The contact fields a visitor keeps, in the order of the visitors table. */
export const visitorContactFields: readonly VisitorContactField[] = inVisitorOrder(
  contactFieldDefinitions.filter(isKept),
).map((field) => field.column)

/** The contact fields the visitor profile shows, in its order: the visitors table's. */
export const profileContactFields: readonly ShownDefinition[] = inVisitorOrder(
  contactFieldDefinitions.filter(isShown),
)
