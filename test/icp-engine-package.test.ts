import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import vm from 'node:vm'
import zlib from 'node:zlib'
import { repoRoot } from '@visitor-id/testing/server-process'
import { tempDir } from '@visitor-id/testing/temp-dir'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// @visitor-id/icp-engine as a stranger gets it: `npm pack` of the built package (`npm test`
// builds first), installed from the tarball into an empty project, then used from Node (import,
// require, TypeScript) and bundled for a browser. Nothing here reads the workspace's copy.

const packageDir = path.join(repoRoot, 'packages/icp-engine')
const work = tempDir('vid-icp-package-')
const app = path.join(work.dir, 'app')
const installed = path.join(app, 'node_modules/@visitor-id/icp-engine')
let packed: { filename: string; files: { path: string }[] }

afterAll(() => work.remove())

// Under `npm test`, vitest runs as an npm script and inherits npm's settings as npm_* variables;
// npm_config_local_prefix (the repository root) would make a child npm pack or install the
// repository instead of the directory it runs in.
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) =>
      !/^npm_(config_(local_prefix|workspaces?|include_workspace_root)|package_|lifecycle_|command)/i.test(
        key,
      ),
  ),
)

async function run(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      env: npmEnv,
      maxBuffer: 16 * 1024 * 1024,
    })
    return stdout
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`)
  }
}

beforeAll(async () => {
  // --ignore-scripts: dist is already built; the `prepack` build must not rewrite it under the
  // other test files running at the same time.
  const json = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', work.dir],
    packageDir,
  )
  packed = (JSON.parse(json) as (typeof packed)[])[0]!
  fs.mkdirSync(app)
  fs.writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'icp-engine-consumer', private: true, type: 'module' }),
  )
  // zod comes from the npm cache when it is there, from the registry otherwise (a plain
  // --offline fails on a cache that holds zod's tarball but not its registry document).
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(work.dir, packed.filename)],
    app,
  )
}, 180_000)

// The same use of the library in Node and in the browser bundle: it ends with `result`.
const scenario = `
import { compileRules, evaluate, parseRules, RulesError, safeParseRules, toClickHouseSql } from '@visitor-id/icp-engine'

const rules = parseRules({
  groups: [
    {
      operator: 'AND',
      conditions: [
        { type: 'industry', comparator: 'in', value: ['SaaS', 'Fintech'] },
        { type: 'company_size', comparator: 'gte', value: '50' },
        { type: 'page_contains', comparator: 'contains', value: '/pricing', optional: true, weight: 2 },
      ],
    },
  ],
})
const visitors = [
  { industry: 'saas', company_size: 120, pages: ['/', '/Pricing'] },
  { industry: 'Fintech', company_size: '80', pages: ['/blog'] },
  { industry: 'Retail', company_size: 5000 },
]
const fit = compileRules(rules)
const invalid = safeParseRules({ groups: [{ operator: 'AND', conditions: [{ type: 'industry', comparator: 'gt', value: 5 }] }] })
const result = {
  evaluated: visitors.map((v) => [evaluate(rules, v).matched, evaluate(rules, v).score]),
  compiled: visitors.map((v) => [fit.matches(v), fit.score(v)]),
  sameEvaluation: visitors.every((v) => JSON.stringify(fit(v)) === JSON.stringify(evaluate(rules, v))),
  frozen: Object.isFrozen(rules.groups[0].conditions[0]),
  invalid: invalid.success ? null : [invalid.error instanceof RulesError, invalid.error.issues.map((i) => i.path)],
  sqlParams: Object.keys(toClickHouseSql(rules, { industry: { sql: 'industry' }, company_size: { sql: 'size' }, pages: { sql: 'pages', array: true } }).params).length,
}
`

const expectedResult = {
  evaluated: [
    [true, 100],
    [true, 50],
    [false, 0],
  ],
  compiled: [
    [true, 100],
    [true, 50],
    [false, 0],
  ],
  sameEvaluation: true,
  frozen: true,
  invalid: [true, ['groups.0.conditions.0.comparator']],
  sqlParams: 3,
}

describe('@visitor-id/icp-engine from its tarball', () => {
  it('ships dist (JS, source maps carrying their sources, types), package.json, README.md and LICENSE only', () => {
    const modules = fs
      .readdirSync(path.join(packageDir, 'src'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => f.slice(0, -'.ts'.length))
    expect(modules).toContain('index')
    const expected = [
      ...modules.flatMap((m) => [`dist/${m}.js`, `dist/${m}.js.map`, `dist/${m}.d.ts`]),
      'LICENSE',
      'README.md',
      'package.json',
    ]
    expect(packed.files.map((f) => f.path).sort()).toEqual(expected.sort())

    // Without src/ in the tarball, the maps are only useful with the sources inside them.
    for (const m of modules) {
      const map = JSON.parse(fs.readFileSync(path.join(installed, `dist/${m}.js.map`), 'utf8'))
      expect(map.sourcesContent, m).toHaveLength(1)
      expect(typeof map.sourcesContent[0], m).toBe('string')
    }

    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'))
    expect(manifest.private).toBeUndefined()
    expect(manifest).toMatchObject({ license: 'MIT', type: 'module', sideEffects: false })
    expect(Object.keys(manifest.dependencies)).toEqual(['zod'])
    // zod is the only package installed with it.
    expect(fs.readdirSync(path.join(app, 'node_modules')).filter((f) => !f.startsWith('.'))).toEqual([
      '@visitor-id',
      'zod',
    ])
  })

  it('runs in Node as an ES module and through require()', { timeout: 30_000 }, async () => {
    fs.writeFileSync(path.join(app, 'scenario.mjs'), `${scenario}\nconsole.log(JSON.stringify(result))\n`)
    expect(JSON.parse(await run(process.execPath, ['scenario.mjs'], app))).toEqual(expectedResult)

    // require() of an ES module is on by default in every Node version of `engines`.
    fs.writeFileSync(
      path.join(app, 'require.cjs'),
      `const icp = require('@visitor-id/icp-engine')
       const rules = icp.parseRules({ groups: [{ operator: 'OR', conditions: [{ type: 'country', comparator: 'equals', value: 'FR' }] }] })
       console.log(icp.evaluate(rules, { country: 'fr' }).score)`,
    )
    expect(await run(process.execPath, ['require.cjs'], app)).toBe('100\n')
  })

  it("the README's opening example prints what its comments say", { timeout: 30_000 }, async () => {
    const readme = fs.readFileSync(path.join(installed, 'README.md'), 'utf8')
    const example = /^```js\n([\s\S]*?)^```/m.exec(readme)?.[1]
    expect(example).toBeDefined()
    expect(readme.indexOf('```js')).toBeLessThan(300) // it opens the README
    const printed = [...example!.matchAll(/^console\.log\(.*\) \/\/ (.*)$/gm)].map((m) => m[1])
    expect(printed.length).toBeGreaterThan(0)
    fs.writeFileSync(path.join(app, 'icp.mjs'), example!)
    expect((await run(process.execPath, ['icp.mjs'], app)).trimEnd().split('\n')).toEqual(printed)
  })

  it('its types check in a TypeScript project (nodenext and bundler resolution, lib check on)', {
    timeout: 60_000,
  }, async () => {
    fs.writeFileSync(
      path.join(app, 'consumer.ts'),
      `import { compileRules, type Evaluation, evaluate, parseRules, type Rules } from '@visitor-id/icp-engine'
       const rules: Rules = parseRules({ groups: [{ operator: 'AND', conditions: [{ type: 'industry', comparator: 'equals', value: 'SaaS' }] }] })
       export const evaluation: Evaluation = evaluate(rules, { industry: 'saas', pages: ['/'] })
       export const score: number = compileRules(rules).score({ company_size: 10 })
       // @ts-expect-error facts are strings, numbers, booleans, null or arrays
       evaluate(rules, { industry: { name: 'SaaS' } })
      `,
    )
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc')
    for (const [module, moduleResolution] of [
      ['nodenext', 'nodenext'],
      ['preserve', 'bundler'],
    ] as const) {
      const config = `tsconfig.${moduleResolution}.json`
      const compilerOptions = {
        module,
        moduleResolution,
        target: 'es2022',
        strict: true,
        noEmit: true,
        types: [],
      }
      fs.writeFileSync(path.join(app, config), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }))
      await run(process.execPath, [tsc, '-p', config], app)
    }
  })

  it('bundles for a browser and runs with no host globals at all', { timeout: 30_000 }, async () => {
    fs.writeFileSync(
      path.join(app, 'browser.mjs'),
      `${scenario}\nglobalThis.icpResult = JSON.stringify(result)\n`,
    )
    const bundle = await build({
      entryPoints: ['browser.mjs'],
      absWorkingDir: app,
      bundle: true,
      platform: 'browser', // a Node built-in import fails to resolve
      format: 'esm',
      minify: true,
      write: false,
      metafile: true,
      logLevel: 'silent',
    })
    // Everything came from the installed tarball and zod, nothing from the workspace.
    for (const input of Object.keys(bundle.metafile.inputs))
      expect(input).toMatch(
        /^(browser\.mjs|node_modules\/@visitor-id\/icp-engine\/dist\/|node_modules\/zod\/)/,
      )
    const code = bundle.outputFiles[0]!.contents

    // A fresh context has only the language's own globals: no process, Buffer, console, DOM.
    const context = vm.createContext({})
    vm.runInContext(`'use strict';${bundle.outputFiles[0]!.text}`, context)
    expect(JSON.parse(context.icpResult as string)).toEqual(expectedResult)

    const gzipped = zlib.gzipSync(code).length
    const kb = (n: number) => (n / 1024).toFixed(1)
    console.log(
      `icp-engine browser bundle, zod included: ${kb(code.length)} KB minified, ${kb(gzipped)} KB gzipped`,
    )
    // Measured 28.0 KB gzipped (zod 4.6.7), of which the engine is about 6.5 KB: the engine imports
    // zod as a namespace, so the bundler drops what the schemas never use (a named import kept all
    // of zod: 97.5 KB). The bound is 1.5x that: room for zod's minor releases, while a second copy
    // of zod, a named import or a polyfill would cross it.
    expect(gzipped).toBeLessThan(42 * 1024)
  })
})
