export { principalOf } from './auth.js'
export { type ApiPluginOptions, apiPlugin } from './plugin.js'
export { parse } from './validation.js'
