// The public face of core's filters domain: what other packages import as @visitor-id/core/filters.
export {
  type CompanyFilter,
  type ContactFilter,
  companyFilterSchema,
  contactFilterSchema,
  type Filter,
  filterSchema,
} from './filter.js'
