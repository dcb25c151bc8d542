// Bundles the browser tracker into dist/p.js: one minified IIFE, es2017. Optional features sit
// behind compile-time flags (see src/tracker/flags.ts); `bundleTracker` builds any combination,
// which the size test and bench/ingest/pixel-size.mjs use.
import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

export const defaultFeatures = { FEATURE_SPA: true, FEATURE_ENGAGEMENT: true, FEATURE_FORMS: true }

/** Builds the tracker in memory and returns its minified source. */
export async function bundleTracker(features = defaultFeatures) {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./src/tracker/index.ts', import.meta.url))],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2017',
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
    // The bundle is an IIFE: a "use strict" prologue would only cost bytes.
    tsconfigRaw: { compilerOptions: { alwaysStrict: false } },
    define: Object.fromEntries(Object.entries(features).map(([name, on]) => [name, String(on)])),
  })
  return result.outputFiles[0].text
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = new URL('./dist/', import.meta.url)
  mkdirSync(out, { recursive: true })
  writeFileSync(new URL('p.js', out), await bundleTracker())
}
