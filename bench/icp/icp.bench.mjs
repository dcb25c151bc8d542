// ICP engine benchmark (not a test). Same run, same data: 100k seeded random visitors and one
// 3-group, 9-condition rule, evaluated by compileRules, evaluate, json-logic-js and
// json-rules-engine (given the equivalent rule), then 10 million synthetic visitors scored inside
// embedded ClickHouse with toClickHouseSql. Prints Markdown: medians of several rounds and ratios.
//
//   npm run build && node bench/icp/icp.bench.mjs
//
// Options: --visitors=100000 --rows=10000000 --rounds=7

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { createClient } from '@clickhouse/client'
import { createChdbConnection } from 'chdb/connection'
import jsonLogic from 'json-logic-js'
import { Engine } from 'json-rules-engine'
import { compileRules, evaluate, parseRules, toClickHouseSql } from '../../packages/icp-engine/dist/index.js'

const arg = (name, fallback) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`))
  return hit ? Number(hit.split('=')[1]) : fallback
}
const VISITORS = arg('visitors', 100_000)
const ROWS = arg('rows', 10_000_000)
const ROUNDS = arg('rounds', 7)
const SLOW_ROUNDS = 3 // json-rules-engine is async and two orders of magnitude slower

// --- the rule --------------------------------------------------------------------------------
const RULES = parseRules({
  groups: [
    {
      operator: 'AND',
      conditions: [
        { type: 'industry', comparator: 'in', value: ['SaaS', 'Software', 'Fintech'] },
        { type: 'company_size', comparator: 'between', value: [50, 1000] },
        { type: 'country', comparator: 'in', value: ['US', 'GB', 'DE', 'FR'] },
        { type: 'page_contains', comparator: 'contains', value: '/pricing', optional: true },
      ],
    },
    {
      operator: 'OR',
      conditions: [
        { type: 'job_title', comparator: 'contains', value: 'CTO' },
        { type: 'utm_source', comparator: 'equals', value: 'linkedin' },
        { type: 'page_view_count', comparator: 'gte', value: 5, optional: true },
      ],
    },
    {
      operator: 'AND',
      conditions: [
        { type: 'is_hosting', comparator: 'equals', value: false },
        { type: 'session_count', comparator: 'gte', value: 3 },
      ],
    },
  ],
})

// --- seeded data -----------------------------------------------------------------------------
function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const INDUSTRIES = [
  'SaaS',
  'saas',
  'Software',
  'Fintech',
  'Retail',
  'Healthcare',
  'Manufacturing',
  'Education',
  null,
]
const COUNTRIES = ['US', 'us', 'GB', 'DE', 'FR', 'ES', 'IN', 'BR', null]
const PAGES = ['/', '/pricing', '/Pricing/Team', '/blog/post', '/docs', '/careers', '/about']
const TITLES = ['CTO', 'Co-founder & cto', 'Engineer', 'Head of Sales', 'VP Marketing', null, '']
const SOURCES = ['google', 'LinkedIn', 'newsletter', 'bing', 'twitter']

function visitors(n, seed) {
  const rnd = mulberry32(seed)
  const pick = (list) => list[Math.floor(rnd() * list.length)]
  const out = []
  for (let i = 0; i < n; i++) {
    const size = Math.round(Math.exp(rnd() * Math.log(20000)))
    const sources = rnd() < 0.3 ? [pick(SOURCES), pick(SOURCES)] : rnd() < 0.8 ? pick(SOURCES) : null
    out.push({
      industry: pick(INDUSTRIES),
      company_size: rnd() < 0.1 ? null : rnd() < 0.2 ? String(size) : size,
      country: pick(COUNTRIES),
      pages: Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick(PAGES)),
      job_title: pick(TITLES),
      utm_source: sources,
      page_view_count: 1 + Math.floor(rnd() * 30),
      session_count: rnd() < 0.1 ? null : 1 + Math.floor(rnd() * 10),
      is_hosting: rnd() < 0.05 ? null : rnd() < 0.1,
    })
  }
  return out
}

// --- the equivalent rule for json-logic-js ---------------------------------------------------
// json-logic has no case folding, no scalar-or-array facts and no let-binding: two tiny custom
// operations give it the first two; the third means conditions appear once for matched and once
// for the score, which is how a json-logic user would have to write it.
jsonLogic.add_operation('lower', (s) => (typeof s === 'string' ? s.toLowerCase() : ''))
jsonLogic.add_operation('arr', (v) => (Array.isArray(v) ? v : v == null ? [] : [v]))
const lower = (name) => ({ lower: { var: name } })
const num = (name) => ({ var: name })
const L = {
  industry: { in: [lower('industry'), ['saas', 'software', 'fintech']] },
  size: { and: [{ '!=': [num('company_size'), null] }, { '<=': [50, num('company_size'), 1000] }] },
  country: { in: [lower('country'), ['us', 'gb', 'de', 'fr']] },
  pricing: { some: [{ arr: { var: 'pages' } }, { in: ['/pricing', { lower: { var: '' } }] }] },
  cto: { in: ['cto', lower('job_title')] },
  linkedin: { some: [{ arr: { var: 'utm_source' } }, { '==': [{ lower: { var: '' } }, 'linkedin'] }] },
  views: { '>=': [num('page_view_count'), 5] },
  hosting: { '===': [{ var: 'is_hosting' }, false] },
  sessions: { and: [{ '!=': [num('session_count'), null] }, { '>=': [num('session_count'), 3] }] },
}
const pts = (c) => ({ if: [c, 1, 0] })
const groupScore = (cs) => ({ '/': [{ '*': [100, { '+': cs.map(pts) }] }, cs.length] })
const LOGIC_MATCH = {
  or: [
    { and: [L.industry, L.size, L.country] },
    { or: [L.cto, L.linkedin] },
    { and: [L.hosting, L.sessions] },
  ],
}
// -1 when no group matched, else the best matched group's (unrounded) score.
const LOGIC_FULL = {
  max: [
    {
      if: [
        { and: [L.industry, L.size, L.country] },
        groupScore([L.industry, L.size, L.country, L.pricing]),
        -1,
      ],
    },
    { if: [{ or: [L.cto, L.linkedin] }, groupScore([L.cto, L.linkedin, L.views]), -1] },
    { if: [{ and: [L.hosting, L.sessions] }, groupScore([L.hosting, L.sessions]), -1] },
  ],
}

// --- the equivalent rule for json-rules-engine -----------------------------------------------
// One engine rule per condition (so optional conditions can be scored), combined per group in JS.
function rulesEngine() {
  const engine = new Engine([], { allowUndefinedFacts: true })
  const list = (v) => (Array.isArray(v) ? v : v == null ? [] : [v])
  const str = (v) => (typeof v === 'string' ? v.toLowerCase() : '')
  engine.addOperator('inCI', (fact, values) => list(fact).some((f) => values.includes(str(f))))
  engine.addOperator('containsCI', (fact, v) => list(fact).some((f) => str(f).includes(v)))
  engine.addOperator('equalsCI', (fact, v) => list(fact).some((f) => str(f) === v))
  engine.addOperator('between', (fact, [a, b]) => fact != null && fact !== '' && +fact >= a && +fact <= b)
  engine.addOperator('gteNum', (fact, v) => fact != null && fact !== '' && +fact >= v)
  const conditions = [
    ['industry', 'inCI', ['saas', 'software', 'fintech']],
    ['company_size', 'between', [50, 1000]],
    ['country', 'inCI', ['us', 'gb', 'de', 'fr']],
    ['pages', 'containsCI', '/pricing'],
    ['job_title', 'containsCI', 'cto'],
    ['utm_source', 'equalsCI', 'linkedin'],
    ['page_view_count', 'gteNum', 5],
    ['is_hosting', 'equal', false],
    ['session_count', 'gteNum', 3],
  ]
  conditions.forEach(([fact, operator, value], i) => {
    engine.addRule({
      name: String(i),
      conditions: { all: [{ fact, operator, value }] },
      event: { type: `c${i}` },
    })
  })
  return async (facts) => {
    const { results } = await engine.run(facts)
    const p = Array(9).fill(false)
    for (const r of results) p[Number(r.name)] = true
    const groups = [
      [p[0] && p[1] && p[2], [p[0], p[1], p[2], p[3]]],
      [p[4] || p[5], [p[4], p[5], p[6]]],
      [p[7] && p[8], [p[7], p[8]]],
    ]
    let best = -1
    for (const [m, cs] of groups) {
      if (m) best = Math.max(best, Math.round((100 * cs.filter(Boolean).length) / cs.length))
    }
    return best
  }
}

// --- timing helpers --------------------------------------------------------------------------
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const fmt = (n) => Math.round(n).toLocaleString('en-US')

function timeSync(fn, data, rounds) {
  fn(data) // warm-up
  const rates = []
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now()
    fn(data)
    rates.push(data.length / ((performance.now() - t0) / 1000))
  }
  return median(rates)
}

/** Times async per-item calls; also returns the last round's outputs so they can be checked. */
async function timeAsync(fn, data, rounds) {
  const rates = []
  const outputs = new Array(data.length)
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now()
    for (let i = 0; i < data.length; i++) outputs[i] = await fn(data[i])
    rates.push(data.length / ((performance.now() - t0) / 1000))
  }
  return { rate: median(rates), outputs }
}

// --- in-process engines ----------------------------------------------------------------------
async function benchJs(lines) {
  // Through JSON, as visitors arrive from a queue or a database: every string is its own instance.
  const data = JSON.parse(JSON.stringify(visitors(VISITORS, 42)))
  const compiled = compileRules(RULES)
  const engineRun = rulesEngine()
  let sink = 0

  // Same answers: every engine must agree with compileRules on every visitor (json-rules-engine
  // is checked on the outputs of its timed rounds, it is too slow for an extra pass).
  let agreeLogic = 0
  let agreeEvaluate = 0
  let matchedCount = 0
  const expected = data.map((v) => {
    const want = compiled(v)
    if (want.matched) matchedCount++
    const ev = evaluate(RULES, v)
    if (ev.matched === want.matched && ev.score === want.score) agreeEvaluate++
    const logic = jsonLogic.apply(LOGIC_FULL, v)
    const wantLogic = want.matched ? want.score : -1
    if (
      (logic < 0 ? -1 : Math.round(logic)) === wantLogic &&
      jsonLogic.apply(LOGIC_MATCH, v) === want.matched
    ) {
      agreeLogic++
    }
    return wantLogic
  })
  const slow = await timeAsync(engineRun, data, SLOW_ROUNDS)
  const agreeEngine = slow.outputs.filter((out, i) => out === expected[i]).length

  const results = [
    [
      'compileRules(rules)(facts) — full Evaluation',
      timeSync(
        (d) => {
          for (const v of d) sink += compiled(v).score
        },
        data,
        ROUNDS,
      ),
    ],
    [
      'compileRules(rules).score(facts) — score only',
      timeSync(
        (d) => {
          for (const v of d) sink += compiled.score(v)
        },
        data,
        ROUNDS,
      ),
    ],
    [
      'compileRules(rules).matches(facts) — matched only',
      timeSync(
        (d) => {
          for (const v of d) sink += compiled.matches(v) ? 1 : 0
        },
        data,
        ROUNDS,
      ),
    ],
    [
      'evaluate(rules, facts) — full Evaluation',
      timeSync(
        (d) => {
          for (const v of d) sink += evaluate(RULES, v).score
        },
        data,
        ROUNDS,
      ),
    ],
    [
      'json-logic-js — matched + score',
      timeSync(
        (d) => {
          for (const v of d) sink += jsonLogic.apply(LOGIC_FULL, v)
        },
        data,
        ROUNDS,
      ),
    ],
    [
      'json-logic-js — matched only',
      timeSync(
        (d) => {
          for (const v of d) sink += jsonLogic.apply(LOGIC_MATCH, v) ? 1 : 0
        },
        data,
        ROUNDS,
      ),
    ],
    ['json-rules-engine — matched + score', slow.rate],
  ]
  const logicFull = results[4][1]
  const logicMatch = results[5][1]

  lines.push(
    `## In-process evaluation (${fmt(VISITORS)} visitors, ${RULES.groups.length} groups, 9 conditions)`,
  )
  lines.push('')
  lines.push(
    `Visitors matched: ${fmt(matchedCount)}. Agreement with compileRules on every visitor: json-logic-js ${fmt(agreeLogic)}/${fmt(VISITORS)}, json-rules-engine ${fmt(agreeEngine)}/${fmt(VISITORS)}, evaluate ${fmt(agreeEvaluate)}/${fmt(VISITORS)}.`,
  )
  lines.push('')
  lines.push(
    `Median of ${ROUNDS} rounds (json-rules-engine: ${SLOW_ROUNDS}) over all visitors, after one warm-up round.`,
  )
  lines.push('')
  lines.push('| engine | evaluations/s | vs json-logic-js (same output) |')
  lines.push('|---|---:|---:|')
  for (const [name, r] of results) {
    const base = name.includes('matched only') ? logicMatch : logicFull
    lines.push(`| ${name} | ${fmt(r)} | ${(r / base).toFixed(1)}x |`)
  }
  lines.push('')
  lines.push(
    `compileRules (full Evaluation) vs json-logic-js (matched + score): **${(results[0][1] / logicFull).toFixed(1)}x**; vs json-rules-engine: **${(results[0][1] / results[6][1]).toFixed(0)}x**; vs evaluate: ${(results[0][1] / results[3][1]).toFixed(1)}x.`,
  )
  lines.push('')
  return sink
}

// --- ClickHouse ------------------------------------------------------------------------------
const COLUMNS = {
  industry: { sql: 'industry' },
  company_size: { sql: 'company_size' },
  country: { sql: 'country' },
  pages: { sql: 'pages', array: true },
  job_title: { sql: 'job_title' },
  utm_source: { sql: 'utm_source', array: true },
  page_view_count: { sql: 'page_view_count' },
  session_count: { sql: 'session_count' },
  is_hosting: { sql: 'is_hosting' },
}

const sqlList = (xs) => `[${xs.map((x) => (x === null ? 'NULL' : `'${x}'`)).join(', ')}]`
const h = (k) => `cityHash64(number, ${k})`
const GENERATE = `
INSERT INTO visitors SELECT
  number AS id,
  ${sqlList(INDUSTRIES)}[1 + ${h(1)} % ${INDUSTRIES.length}] AS industry,
  if(${h(2)} % 10 = 0, NULL, round(exp((${h(3)} % 1000000) / 1000000 * log(20000)))) AS company_size,
  ${sqlList(COUNTRIES)}[1 + ${h(4)} % ${COUNTRIES.length}] AS country,
  arrayMap(i -> ${sqlList(PAGES)}[1 + cityHash64(number, 100 + i) % ${PAGES.length}], range(1 + ${h(5)} % 6)) AS pages,
  ${sqlList(TITLES)}[1 + ${h(6)} % ${TITLES.length}] AS job_title,
  multiIf(${h(7)} % 10 < 3, [${sqlList(SOURCES)}[1 + ${h(8)} % 5], ${sqlList(SOURCES)}[1 + ${h(9)} % 5]],
          ${h(7)} % 10 < 8, [${sqlList(SOURCES)}[1 + ${h(8)} % 5]], []) AS utm_source,
  1 + ${h(10)} % 30 AS page_view_count,
  if(${h(11)} % 10 = 0, NULL, 1 + ${h(12)} % 10) AS session_count,
  if(${h(13)} % 20 = 0, NULL, ${h(14)} % 10 = 0) AS is_hosting
FROM numbers(${ROWS})`

async function benchClickHouse(lines) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'icp-bench-'))
  const client = createClient({ connection: createChdbConnection({ path: dir }) })
  const q = async (query, query_params) =>
    (await client.query({ query, query_params, format: 'JSONEachRow' })).json()
  try {
    await client.command({
      query: `CREATE TABLE visitors (id UInt64, industry Nullable(String), company_size Nullable(Float64),
        country LowCardinality(Nullable(String)), pages Array(String), job_title Nullable(String),
        utm_source Array(String), page_view_count UInt16, session_count Nullable(UInt16), is_hosting Nullable(Bool))
        ENGINE = MergeTree ORDER BY id`,
    })
    let t0 = performance.now()
    await client.command({ query: GENERATE })
    await client.command({ query: 'OPTIMIZE TABLE visitors FINAL' })
    const genSeconds = (performance.now() - t0) / 1000
    const [{ v }] = await q('SELECT version() AS v')

    const sql = toClickHouseSql(RULES, COLUMNS)
    // Cross-check a sample of rows against the JS evaluator before timing anything.
    const sample = await q(
      `SELECT *, ${sql.matched} AS m, ${sql.score} AS s FROM visitors WHERE id % 5000 = 7 ORDER BY id`,
      sql.params,
    )
    let agree = 0
    const compiled = compileRules(RULES)
    for (const row of sample) {
      const r = compiled(row)
      if (r.matched === (Number(row.m) === 1) && r.score === Number(row.s)) agree++
    }

    const scoring = `SELECT count() AS n, sum(m) AS matched, sum(s) AS total FROM (SELECT ${sql.matched} AS m, ${sql.score} AS s FROM visitors)`
    const scan = `SELECT count() AS n, sum(length(ifNull(industry, ''))) + sum(ifNull(company_size, 0)) + sum(length(ifNull(country, '')))
      + sum(length(pages)) + sum(length(ifNull(job_title, ''))) + sum(length(utm_source)) + sum(page_view_count)
      + sum(ifNull(session_count, 0)) + sum(ifNull(toUInt8(is_hosting), 0)) AS x FROM visitors`
    const timeQuery = async (text, params, rounds) => {
      await q(text, params) // warm-up (page cache)
      const secs = []
      let result
      for (let r = 0; r < rounds; r++) {
        t0 = performance.now()
        result = await q(text, params)
        secs.push((performance.now() - t0) / 1000)
      }
      return { secs: median(secs), result: result[0] }
    }
    const scored = await timeQuery(scoring, sql.params, 3)
    const scanned = await timeQuery(scan, {}, 3)

    lines.push(`## Inside embedded ClickHouse (chdb, ClickHouse ${v}), ${fmt(ROWS)} synthetic visitors`)
    lines.push('')
    lines.push(
      `Rows generated in-engine from numbers(${fmt(ROWS)}) with cityHash64 choices in ${genSeconds.toFixed(1)} s (MergeTree, optimized). Sample cross-check against compileRules: ${agree}/${sample.length} rows agree.`,
    )
    lines.push('')
    lines.push('| query | median s (3 runs) | rows/s |')
    lines.push('|---|---:|---:|')
    lines.push(
      `| toClickHouseSql matched + score over all rows | ${scored.secs.toFixed(2)} | ${fmt(ROWS / scored.secs)} |`,
    )
    lines.push(
      `| baseline: read and sum the same 9 columns | ${scanned.secs.toFixed(2)} | ${fmt(ROWS / scanned.secs)} |`,
    )
    lines.push('')
    lines.push(
      `Matched ${fmt(Number(scored.result.matched))} of ${fmt(Number(scored.result.n))} visitors; SQL text ${fmt(sql.matched.length + sql.score.length)} characters, ${Object.keys(sql.params).length} query parameters.`,
    )
    lines.push('')
  } finally {
    await client.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const started = performance.now()
const cpus = os.cpus()
const lines = [
  '# ICP engine benchmark',
  '',
  `Date: ${new Date().toISOString()}. Machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.platform()} ${os.release()}, Node ${process.version}. Load average at start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')} (1 / 5 / 15 min).`,
  '',
]
const sink = await benchJs(lines)
await benchClickHouse(lines)
lines.push(
  `Total run time ${((performance.now() - started) / 1000).toFixed(0)} s; load average at end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}. (checksum ${Math.round(sink) % 1000})`,
)
console.log(lines.join('\n'))
