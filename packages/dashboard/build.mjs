// Bundles the dashboard into dist/: index.html, app-<hash>.js and app-<hash>.css (content-hashed,
// so the server can cache them for a year). Prints the initial JavaScript's raw, gzip and brotli
// sizes and fails above the budget: the dashboard must stay small and fast to open.
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

/** Initial JavaScript budget, gzipped. */
export const budgetBytes = 100 * 1024

/** Builds the app in memory: `{ js, css }` as strings. */
export async function bundleDashboard() {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./src/main.tsx', import.meta.url))],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
    outdir: 'out',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const pick = (ext) => result.outputFiles.find((file) => file.path.endsWith(ext))?.text ?? ''
  return { js: pick('.js'), css: pick('.css') }
}

/** Raw, gzip and brotli sizes of a text, in bytes. */
export function sizes(text) {
  const raw = Buffer.from(text)
  return {
    raw: raw.length,
    gzip: gzipSync(raw, { level: 9 }).length,
    brotli: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  }
}

const hashed = (name, text) => `${name}-${createHash('sha256').update(text).digest('hex').slice(0, 10)}`

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { js, css } = await bundleDashboard()
  const jsName = `${hashed('app', js)}.js`
  const cssName = `${hashed('app', css)}.css`
  const html = readFileSync(new URL('./src/index.html', import.meta.url), 'utf8')
    .replace('%APP_JS%', jsName)
    .replace('%APP_CSS%', cssName)
  const out = new URL('./dist/', import.meta.url)
  mkdirSync(out, { recursive: true })
  // Old hashed bundles go: the server serves what dist/ holds.
  for (const file of readdirSync(out)) if (/^app-[0-9a-f]+\.(js|css)$/.test(file)) rmSync(new URL(file, out))
  writeFileSync(new URL(jsName, out), js)
  writeFileSync(new URL(cssName, out), css)
  writeFileSync(new URL('index.html', out), html)
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`
  const j = sizes(js)
  const c = sizes(css)
  console.log(
    `dashboard: ${jsName} ${kb(j.raw)} raw, ${kb(j.gzip)} gzip, ${kb(j.brotli)} brotli ` +
      `(budget ${kb(budgetBytes)} gzip); ${cssName} ${kb(c.gzip)} gzip`,
  )
  if (j.gzip > budgetBytes) {
    console.error(
      `dashboard: the initial JavaScript is ${kb(j.gzip)} gzipped, over the ${kb(budgetBytes)} budget`,
    )
    process.exit(1)
  }
}
