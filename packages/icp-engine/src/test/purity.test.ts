// The library must run in browsers too: no Node built-ins, no DOM, no dependency beyond zod.
// The build already has no Node or DOM types; this also catches globals that slip through `any`.

import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const srcDir = path.resolve(import.meta.dirname, '..')
const libraryFiles = fs
  .readdirSync(srcDir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => ({ name: f, text: fs.readFileSync(path.join(srcDir, f), 'utf8') }))

describe('library sources', () => {
  it.each(libraryFiles.map((f) => [f.name, f.text]))('%s imports only zod and sibling modules', (_, text) => {
    const specifiers = [...text.matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => m[1])
    for (const s of specifiers) expect(s === 'zod' || /^\.\/[a-z-]+\.js$/.test(s ?? '')).toBe(true)
    expect(text).not.toMatch(/\b(require\(|import\(|process\.|Buffer\b|globalThis|window\.|document\.)/)
  })

  it('keeps modules small', () => {
    for (const f of libraryFiles) expect(f.text.split('\n').length, f.name).toBeLessThanOrEqual(300)
  })
})
