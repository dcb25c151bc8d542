export { exportPerson, type PersonExport } from './access.js'
export {
  createErasedVisitors,
  type ErasedVisitors,
  erasedVisitorHash,
  replacementVisitorId,
} from './erased-visitors.js'
export {
  type ErasureDeps,
  type ErasureRecord,
  type ErasureResult,
  erasePerson,
  listErasures,
} from './erasure.js'
export { findPerson, type Person, type PersonKey, personKeySchema } from './person.js'
export { applyRetention, type RetentionResult, retainedTables, startRetention } from './retention.js'
export {
  companyOnlyCountries,
  cutoffOf,
  type EffectivePrivacy,
  eeaCountries,
  effectivePrivacy,
  organizationPrivacy,
  type PrivacySettingsRow,
  rawDataFrom,
} from './settings.js'
export { personalTables, tablesWithoutPersons } from './tables.js'
