// The public face of core's companies domain: what other packages import as @visitor-id/core/companies.
export { type CompanyRow, companiesTable } from './rows.js'
