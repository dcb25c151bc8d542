export { exportPerson, type PersonExport } from './access.js'
export {
  createErasedVisitors,
  type ErasedVisitors,
  erasedVisitorHash,
  replacementVisitorId,
} from './erased-visitors.js'
export { type ErasureDeps, type ErasureResult, erasePerson } from './erasure.js'
export { findPerson, type Person, type PersonKey, personKeySchema } from './person.js'
export { personalTables, tablesWithoutPersons } from './tables.js'
