#!/usr/bin/env node
// Prints the tracker's size: raw, gzip (level 9, what /p.js serves) and brotli (quality 11), for
// the default bundle and with each optional feature compiled out. Budget: 1,500 bytes gzipped.
//   node bench/ingest/pixel-size.mjs
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { bundleTracker, defaultFeatures } from '../../packages/pixel/build.mjs'

const budget = 1500
const variants = [
  ['default (all features)', defaultFeatures],
  ['without SPA tracking', { ...defaultFeatures, FEATURE_SPA: false }],
  ['without engagement', { ...defaultFeatures, FEATURE_ENGAGEMENT: false }],
  ['without form capture', { ...defaultFeatures, FEATURE_FORMS: false }],
  ['core only', { FEATURE_SPA: false, FEATURE_ENGAGEMENT: false, FEATURE_FORMS: false }],
]
console.log('variant                    raw    gzip  brotli')
let failed = false
for (const [name, features] of variants) {
  const source = await bundleTracker(features)
  const gzip = gzipSync(source, { level: 9 }).length
  const brotli = brotliCompressSync(source, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length
  console.log(
    `${name.padEnd(24)} ${String(source.length).padStart(5)}  ${String(gzip).padStart(5)}  ${String(brotli).padStart(5)}`,
  )
  if (features === defaultFeatures && gzip > budget) failed = true
}
console.log(`budget: ${budget} bytes gzipped for the default bundle${failed ? ' (EXCEEDED)' : ''}`)
process.exit(failed ? 1 : 0)
