import { brotliCompressSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'

// The size budget of the default bundle, checked on every test run (bench/ingest/pixel-size.mjs
// prints the same figures).
const budgetGzipBytes = 1500

type Features = Record<'FEATURE_SPA' | 'FEATURE_ENGAGEMENT' | 'FEATURE_FORMS', boolean>
const buildModule = '../build.mjs'
const { bundleTracker, defaultFeatures } = (await import(buildModule)) as {
  bundleTracker: (features?: Features) => Promise<string>
  defaultFeatures: Features
}

describe('tracker bundle size', () => {
  it(`stays within ${budgetGzipBytes} bytes gzipped`, async () => {
    const source = await bundleTracker()
    const gzip = gzipSync(source, { level: 9 }).length
    const brotli = brotliCompressSync(source).length
    console.log(`tracker: ${source.length} B raw, ${gzip} B gzip, ${brotli} B brotli`)
    expect(gzip).toBeLessThanOrEqual(budgetGzipBytes)
    // Default zlib level too, in case a server compresses on the fly.
    expect(gzipSync(source).length).toBeLessThanOrEqual(budgetGzipBytes)
  })

  it('drops a disabled feature entirely', async () => {
    const full = await bundleTracker(defaultFeatures)
    const lean = await bundleTracker({ FEATURE_SPA: false, FEATURE_ENGAGEMENT: false, FEATURE_FORMS: false })
    expect(lean.length).toBeLessThan(full.length)
    expect(full).toContain('pushState')
    expect(lean).not.toContain('pushState')
    expect(lean).not.toContain('visibilitychange')
    expect(lean).not.toContain('submit')
  })

  it('is one IIFE', async () => {
    const source = await bundleTracker()
    expect(source.startsWith('(()=>{')).toBe(true)
    expect(source.trimEnd().endsWith('})();')).toBe(true)
  })
})
