// The rows of what the pixel tracks: its configuration, the visitors and the companies they are
// attributed to.
import { type VisitorContactField, visitorContactFields } from '../contact-fields/contact-fields.js'
import { stampColumns, timeColumn } from '../store/columns.js'
import type { EntityDefinition } from '../store/repository.js'

export interface PixelConfigRow {
  id: string
  organization_id: string
  tracking_key: string
  allowed_referrers: string[]
  verified_domains: string[]
  ip_tracking: boolean
  respect_privacy_signals: boolean
  form_capture: boolean
  icp_settings: string
  created_at: string
  updated_at: string
}

export const pixelConfigsTable: EntityDefinition<PixelConfigRow> = {
  table: 'pixel_configs',
  key: ['organization_id'],
  columns: {
    id: 'String',
    organization_id: 'UUID',
    tracking_key: 'String',
    allowed_referrers: 'Array(String)',
    verified_domains: 'Array(String)',
    ip_tracking: 'Bool',
    respect_privacy_signals: 'Bool',
    form_capture: 'Bool',
    icp_settings: 'String',
    ...stampColumns,
  },
}

/** What a visitor takes from its contact, '' when unknown: the contact's id and every field of it the visitor keeps. */
export interface VisitorContactFields extends Record<VisitorContactField, string> {
  /** The contacts dataset row it was identified as; '' when identified by email alone. */
  contact_id: string
}

/** Every contact field empty: for a visitor known by email alone, or not at all. */
export const blankContactFields: Readonly<VisitorContactFields> = Object.freeze({
  contact_id: '',
  ...(Object.fromEntries(visitorContactFields.map((field) => [field, ''])) as Record<
    VisitorContactField,
    ''
  >),
})

export interface VisitorRow extends VisitorContactFields {
  id: string
  organization_id: string
  company_id: string
  identified_at: string | null
  first_seen_at: string
  last_seen_at: string
  created_at: string
  updated_at: string
}

export const visitorsTable: EntityDefinition<VisitorRow> = {
  table: 'visitors',
  key: ['organization_id', 'id'],
  columns: {
    id: 'UUID',
    organization_id: 'UUID',
    ...(Object.fromEntries(Object.keys(blankContactFields).map((key) => [key, 'String'])) as Record<
      keyof VisitorContactFields,
      'String'
    >),
    company_id: 'String',
    identified_at: `Nullable(${timeColumn})`,
    first_seen_at: timeColumn,
    last_seen_at: timeColumn,
    ...stampColumns,
  },
}
