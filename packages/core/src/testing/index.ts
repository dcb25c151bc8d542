// Helpers for this project's own tests; not part of the service.
export { timeUntil } from './poll.js'
export { organizationRow, personVisitorRow } from './rows.js'
export { parseStripeForm, type StripeServer, startStripeServer } from './stripe-server.js'
export { tempDir } from './temp-dir.js'
