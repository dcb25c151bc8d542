export {
  changesScores,
  checkRules,
  createIcpConfig,
  deleteIcpConfig,
  getIcpConfig,
  type IcpConfigFields,
  type IcpConfigKind,
  listIcpConfigs,
  organizationIcpConfigs,
  rulesIssues,
  slugify,
  slugMaxLength,
  slugPattern,
  updateIcpConfig,
} from './configs.js'
export { factColumns, factsQuery } from './facts.js'
export { filterToRules } from './filter-rules.js'
export {
  type IncrementalScoring,
  rescoreChangedVisitors,
  startIncrementalScoring,
} from './incremental.js'
export {
  type RecalculationStatus,
  recalculationJobName,
  recalculationStatus,
  requestDependentRecalculations,
  requestRecalculation,
  runRecalculation,
} from './recalculation.js'
export { type IcpConfigRow, icpConfigsTable } from './rows.js'
export { activeOrganizationConfigIds, configExpressions, scoreConfig } from './scoring.js'
export { addIcpConfig, changeIcpConfig, type IcpServiceDeps, removeIcpConfig } from './service.js'
export { type IcpStats, icpStats } from './stats.js'
export { type VisitorIcp, visitorIcp } from './statuses.js'
