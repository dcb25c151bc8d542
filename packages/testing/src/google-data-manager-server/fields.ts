// Strict reading of a JSON request body as Google's JSON transcoding reads it: a name the message
// does not have, a value of the wrong type, a value outside an enum are all 400 INVALID_ARGUMENT.
// Fields are read by the lowerCamelCase names the REST reference documents (the API would also take
// the proto names; the adapter is held to the documented ones). Paths in errors use proto names.
import { invalidValue, requiredField, unknownField } from './errors.js'

export type Json = Record<string, unknown>

const protoName = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** The path of a field of the message at `path`, as Google names it in errors. */
export const fieldPath = (path: string, name: string) =>
  path ? `${path}.${protoName(name)}` : protoName(name)

/** The message at `path`, every name in it one of `known`. */
export function message(value: unknown, path: string, known: readonly string[]): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidValue(path, 'TYPE_MESSAGE', value)
  }
  for (const name of Object.keys(value)) if (!known.includes(name)) throw unknownField(name, path)
  return value as Json
}

/** A repeated field (absent: empty). */
export function repeated(value: unknown, path: string): unknown[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw invalidValue(path, 'TYPE_MESSAGE', value)
  return value
}

export function text(value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw invalidValue(path, 'TYPE_STRING', value)
  return value
}

export function required(value: unknown, path: string): string {
  const found = text(value, path)
  if (!found) throw requiredField(path)
  return found
}

export function bool(value: unknown, path: string): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw invalidValue(path, 'TYPE_BOOL', value)
  return value
}

/** An enum field: one of `values` (its first, the `*_UNSPECIFIED` zero, when absent). */
export function enumValue(value: unknown, path: string, type: string, values: readonly string[]): string {
  if (value === undefined) return values[0]!
  if (typeof value !== 'string' || !values.includes(value)) {
    throw invalidValue(path, `type.googleapis.com/google.ads.datamanager.v1.${type}`, value)
  }
  return value
}

export const consentStatuses = ['CONSENT_STATUS_UNSPECIFIED', 'CONSENT_GRANTED', 'CONSENT_DENIED'] as const

export interface Consent {
  adUserData: string
  adPersonalization: string
}

/** A `Consent` message (absent: both unspecified). */
export function consent(value: unknown, path: string): Consent {
  const c = value === undefined ? {} : message(value, path, ['adUserData', 'adPersonalization'])
  return {
    adUserData: enumValue(c.adUserData, fieldPath(path, 'adUserData'), 'ConsentStatus', consentStatuses),
    adPersonalization: enumValue(
      c.adPersonalization,
      fieldPath(path, 'adPersonalization'),
      'ConsentStatus',
      consentStatuses,
    ),
  }
}
