import { fileURLToPath } from 'node:url'

export {
  isSnippetType,
  renderSnippet,
  type SnippetOptions,
  type SnippetType,
  snippetTypes,
} from './snippets.js'
export {
  configPath,
  consentNoIdentification,
  consentNoStorage,
  kFormCapture,
  kRespectPrivacy,
  type WireEventCode,
  wire,
  wireConfig,
  wireEvents,
} from './wire.js'

/** Absolute path of the built tracker bundle (`npm run build` makes it). */
export const trackerBundlePath = fileURLToPath(new URL('./p.js', import.meta.url))
