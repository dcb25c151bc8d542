// Helpers for this project's own tests; not part of the service.
export { tempDir } from './temp-dir.js'
