// The public face of core's secret-box domain: what other packages import as @visitor-id/core/secret-box.
export { type SecretBox, secretBox } from './secret-box.js'
