// The public face of core's analytics domain: what other packages import as @visitor-id/core/analytics.
export {
  type AnswerCache,
  type AnswerCacheStats,
  answerKey,
  answerTables,
  type CacheOutcome,
  createAnswerCache,
  dataVersion,
} from './answer-cache.js'
export { type AudienceFilter, audienceSql } from './audience.js'
export {
  type ChartInterval,
  type ChartPoint,
  chartIntervalFor,
  visitorsChart,
} from './chart.js'
export {
  type CompanySortKey,
  type CompanyStatistics,
  companySortKeys,
  companyStatistics,
} from './companies.js'
export {
  type CompanyCsvField,
  companyCsvFields,
  exportCompanyCsv,
  exportVisitorCsv,
  type VisitorCsvField,
  visitorCsvFields,
} from './export.js'
export {
  type DroppedHitRow,
  type FilteredHitReason,
  type FilteredHits,
  filteredHitReasons,
  filteredHits,
  insertDroppedHits,
} from './filtered-hits.js'
export {
  type SettleResult,
  settleFirstHours,
  settleFirstHoursNow,
  startFirstHoursSettling,
  withFirstHoursLock,
} from './first-hours.js'
export {
  effectiveRange,
  type PageRequest,
  type StatisticsQuery,
  type TimeRange,
} from './scope.js'
export { isTimeZone, startOfDayIn } from './time-zone.js'
export { statisticsTotals, type Totals } from './totals.js'
export type { VisitorStatistics } from './visitor-rows.js'
export { type VisitorStatisticsQuery, visitorStatistics } from './visitors.js'
