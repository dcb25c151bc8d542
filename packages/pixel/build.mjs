// Bundles the browser tracker into dist/p.js: one minified IIFE, es2017.
import { build } from 'esbuild'

await build({
  entryPoints: [new URL('./src/tracker/index.ts', import.meta.url).pathname],
  outfile: new URL('./dist/p.js', import.meta.url).pathname,
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2017',
  legalComments: 'none',
  logLevel: 'warning',
})
