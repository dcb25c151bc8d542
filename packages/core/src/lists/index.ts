// The public face of core's lists domain: what other packages import as @visitor-id/core/lists.
export { countContacts } from './contact-count.js'
export { type ContactMatch, contactMatch } from './contact-match.js'
export {
  type AutoUpdateStatus,
  autoRefreshIntervalMs,
  autoUpdateStatus,
  deleteList,
  findList,
  type ListDeps,
  listEmailHashes,
  listFilter,
  listIdPattern,
  organizationLists,
  refreshDueLists,
  refreshList,
  type SaveListInput,
  saveList,
  startListAutoRefresh,
} from './lists.js'
export { type ListRow, listsTable } from './rows.js'
