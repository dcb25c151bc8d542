import { fileURLToPath } from 'node:url'

export { renderSnippet, type SnippetOptions, type SnippetType, snippetTypes } from './snippets.js'
export { type WireEventCode, wire, wireEvents } from './wire.js'

/** Absolute path of the built tracker bundle (`npm run build` makes it). */
export const trackerBundlePath = fileURLToPath(new URL('./p.js', import.meta.url))
