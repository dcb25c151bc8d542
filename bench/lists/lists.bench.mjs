#!/usr/bin/env node
// Lists benchmark: the contact count, a list refresh and the audience export on a store of 10 M
// contacts, next to plain queries of the same counts measured in the same run.
//
//   npm run build && node bench/lists/lists.bench.mjs [--contacts 10000000] [--rounds 30]
//     [--data DIR] [--keep] [--companies 200000] [--visitors 100000] [--refresh-rounds 5]
//     [--export-rounds 3] [--role api]
//
// 1. A data directory: --data DIR (filled on first use, reused as it is afterwards), else a temp
//    one, removed at the end unless --keep. The server starts once on it, empty, to write its
//    bootstrap organization and key (DATA_DIR/bootstrap.json), and stops; then dataset.mjs fills
//    the store (the data directory is locked by one process at a time).
// 2. Baseline, through the store in this process, --rounds times each after one warm-up:
//    `SELECT count() FROM contacts`, the same with FINAL, the three-key filter counted by hand
//    over `contacts FINAL` joined to `companies` (the naive way), and `countContacts` itself (the
//    endpoint's query without HTTP), plus three rows that say where the endpoint's time goes
//    (FINAL alone, the condition without FINAL, its contact keys as written and as a plain IN);
//    the queries take turns within each round. Also each filter's members and distinct email
//    hashes, which the counts, the lists and the export must report.
// 3. The server on the filled store (`serve --role api`: no worker, so no automatic refresh runs
//    meanwhile), one request at a time with the bootstrap key:
//    - `POST /contacts/count` with four filter shapes, --rounds each after one warm-up, taking turns;
//    - the 100 k list: `POST /lists/save` (which refreshes it), then `POST /lists/refresh/{id}`
//      --refresh-rounds times;
//    - the 1 M list: `POST /lists/save`, one refresh, then `GET /lists/{id}/chat-ads-export`
//      --export-rounds times (then the 100 k list's, for comparison), read as a stream and
//      counted line by line, with the server's RSS sampled every 100 ms; `X-Unique-Email-Count`
//      must equal the number of data lines.
//    A route answering 404 "Route ... not found" is "not built yet".
// 4. The active parts after the run (list_members gets a part per refresh). Exit code 1 when
//    anything answered or counted otherwise than expected (listed under "Problems found").
//
// Progress goes to stderr; the report (Markdown, for bench/lists/RESULTS.md) to stdout.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { contactMatch, countContacts } from '@visitor-id/core/lists'
import { createStore, lockDataDir, migrate } from '@visitor-id/core/store'
import { waitForMerges } from '../analytics/dataset.mjs'
import { isRouteNotFound } from '../analytics/http.mjs'
import { bootstrapDataDir, rssBytes, startServer } from '../analytics/server.mjs'
import { activeParts, fillListsDataset, filters } from './dataset.mjs'
import { streamExport, timedRequest } from './http.mjs'

const { values } = parseArgs({
  options: {
    contacts: { type: 'string', default: '10000000' },
    companies: { type: 'string', default: '200000' },
    visitors: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '30' },
    'refresh-rounds': { type: 'string', default: '5' },
    'export-rounds': { type: 'string', default: '3' },
    data: { type: 'string' },
    keep: { type: 'boolean', default: false },
    role: { type: 'string', default: 'api' },
  },
})
const contacts = Number(values.contacts)
const rounds = Number(values.rounds)
const refreshRounds = Number(values['refresh-rounds'])
const exportRounds = Number(values['export-rounds'])
const root = path.resolve(import.meta.dirname, '..', '..')
const progress = (line) => console.error(`[bench] ${line}`)
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')
const loadAtStart = loadAverage()
const startedAt = new Date()

// --- The data directory: prepared (--data with a dataset in it), or filled now --------------------
const dataDir = values.data
  ? path.resolve(values.data)
  : mkdtempSync(path.join(os.tmpdir(), 'vid-bench-lists-'))
const removeAtEnd = !values.data && !values.keep
mkdirSync(dataDir, { recursive: true })
process.on('exit', () => {
  if (removeAtEnd) rmSync(dataDir, { recursive: true, force: true })
})
const datasetFile = path.join(dataDir, 'lists-dataset.json')
let dataset
const reused = existsSync(datasetFile)
if (reused) {
  dataset = JSON.parse(readFileSync(datasetFile, 'utf8'))
  progress(
    `reusing the dataset of ${dataDir} (filled ${dataset.endedAt}, ${dataset.counts.contacts} contacts)`,
  )
  if (dataset.requested?.contacts !== contacts) {
    progress(`--contacts ${contacts} ignored: the dataset was filled with ${dataset.requested?.contacts}`)
  }
} else {
  if (existsSync(path.join(dataDir, 'bootstrap.json'))) {
    throw new Error(`${dataDir} has a store but no finished dataset (${datasetFile}); use an empty directory`)
  }
  progress(`bootstrapping ${dataDir}`)
  const bootstrap = await bootstrapDataDir(dataDir)
  const started = performance.now()
  const requested = {
    contacts,
    companies: Number(values.companies),
    visitors: Number(values.visitors),
  }
  dataset = await fillListsDataset(dataDir, {
    organizationId: bootstrap.organizationId,
    ...requested,
    log: progress,
  })
  dataset.requested = requested
  dataset.fillSeconds = (performance.now() - started) / 1000
  writeFileSync(datasetFile, `${JSON.stringify(dataset, null, 2)}\n`)
}
const { organizationId, apiKey } = JSON.parse(readFileSync(path.join(dataDir, 'bootstrap.json'), 'utf8'))
const totalContacts = dataset.counts.contacts

const percentile = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]
const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), n: samples.length }
}
const median = (samples) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    0.5,
  )

// --- Baseline: plain queries through the store ----------------------------------------------------
const naiveSql = `
SELECT count() AS n
FROM contacts AS c FINAL
LEFT JOIN (SELECT id, industry FROM companies FINAL) AS by_id ON by_id.id = c.company_id
LEFT JOIN (SELECT domain, any(industry) AS industry FROM companies FINAL GROUP BY domain) AS by_domain
  ON by_domain.domain = c.company_domain
WHERE lower(c.seniority) IN {seniorities:Array(String)} AND lower(c.country) IN {countries:Array(String)}
  AND lower(if(c.company_id != '', by_id.industry, by_domain.industry)) IN {industries:Array(String)}`
const lowered = (list) => list.map((v) => v.toLowerCase())
const naiveParams = {
  seniorities: lowered(filters.count3.filter.contact.seniorities),
  countries: lowered(filters.count3.filter.contact.countries),
  industries: lowered(filters.count3.filter.company.industries),
}
const baselinePlan = [
  {
    key: 'plain',
    label: '`SELECT count() FROM contacts`',
    run: (store) => store.query('SELECT count() AS n FROM contacts'),
  },
  {
    key: 'plainFinal',
    label: '`SELECT count() FROM contacts FINAL`',
    run: (store) => store.query('SELECT count() AS n FROM contacts FINAL'),
  },
  {
    key: 'naive3',
    label: 'three-key filter by hand: `contacts FINAL` joined to `companies FINAL` (by id, else by domain)',
    run: (store) => store.query(naiveSql, naiveParams),
  },
  {
    key: 'facetsFinal',
    label: '`SELECT count() FROM contact_facets FINAL` (what merging the versions costs)',
    run: (store) => store.query('SELECT count() AS n FROM contact_facets FINAL'),
  },
  {
    key: 'facets3NoFinal',
    label:
      "the endpoint's three-key query without FINAL (for scale only: it would count a re-imported contact twice)",
    run: (store) => {
      const { where, params } = contactMatch(filters.count3.filter)
      return store.query(`SELECT count() AS n FROM contact_facets ${where}`, params)
    },
  },
  {
    key: 'facetsContactKeys',
    label:
      "its two contact keys alone as the endpoint writes them (`lowerUTF8(ifNull(seniority, '')) IN {list}`), no FINAL",
    run: (store) => {
      const { where, params } = contactMatch({ contact: filters.count3.filter.contact })
      return store.query(`SELECT count() AS n FROM contact_facets ${where}`, params)
    },
  },
  {
    key: 'facetsContactKeysPlain',
    label: 'the same two contact keys as plain `seniority IN (...) AND country IN (...)`, no FINAL',
    run: (store) =>
      store.query(
        'SELECT count() AS n FROM contact_facets WHERE seniority IN {seniorities:Array(String)} AND country IN {countries:Array(String)}',
        {
          seniorities: filters.count3.filter.contact.seniorities,
          countries: filters.count3.filter.contact.countries,
        },
      ),
  },
  {
    key: 'countContacts3',
    label: '`countContacts(store, three-key filter)` in this process (the endpoint without HTTP)',
    run: async (store) => [{ n: await countContacts(store, filters.count3.filter) }],
  },
]
const baseline = {}
const expected = {}
let engineVersion = ''
let migrated = { applied: [], seconds: 0 }
let mergesMs = 0
let partsBefore = {}
let partsAfter = {}
let listMembersAfter = { rows: 0, snapshots: 0 }
{
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  try {
    engineVersion = (await store.query('SELECT version() AS v'))[0].v
    const started = performance.now()
    migrated = { applied: (await migrate(store)).applied, seconds: (performance.now() - started) / 1000 }
    if (migrated.applied.length > 0) {
      progress(`applied ${migrated.applied.join(', ')} in ${migrated.seconds.toFixed(1)} s`)
    }
    mergesMs = await waitForMerges(store)
    partsBefore = await activeParts(store)
    progress(`active parts: ${JSON.stringify(partsBefore)}`)
    // What each filter selects, straight off the facets (the lists must report the same).
    for (const [key, { filter }] of Object.entries(filters)) {
      const { where, params } = contactMatch(filter)
      const [row] = await store.query(
        `SELECT count() AS members, uniqExactIf(email_sha256, email_sha256 != '') AS emails
         FROM contact_facets FINAL ${where}`,
        params,
      )
      expected[key] = { members: Number(row.members), emails: Number(row.emails) }
      progress(`${key}: ${expected[key].members} contacts, ${expected[key].emails} distinct email hashes`)
    }
    // One warm-up each, then rounds that run every query once in turn, so a slower stretch of the
    // shared machine weighs on all of them alike.
    const firsts = {}
    const samples = {}
    for (const plan of baselinePlan) {
      firsts[plan.key] = Number((await plan.run(store))[0].n)
      samples[plan.key] = []
    }
    for (let i = 0; i < rounds; i++) {
      for (const plan of baselinePlan) {
        const t = performance.now()
        await plan.run(store)
        samples[plan.key].push(performance.now() - t)
      }
    }
    for (const plan of baselinePlan) {
      baseline[plan.key] = { ...summary(samples[plan.key]), count: firsts[plan.key], label: plan.label }
      progress(`baseline ${plan.key}: ${firsts[plan.key]}, p50 ${baseline[plan.key].p50.toFixed(1)} ms`)
    }
  } finally {
    await store.close()
    lock.release()
  }
}

// --- The server ----------------------------------------------------------------------------------
const countPlan = ['count3', 'contact3', 'company1', 'none']
const counts = {}
const problems = []
const lists = {}
const exports = { list100k: [], list1m: [] }
const server = await startServer(dataDir, ['--role', values.role], { API_RATE_LIMIT: '1000000000' })
progress(`server ${server.url}, pid ${server.pid}, RSS ${mb(rssBytes(server.pid))}`)
try {
  // Counts: one warm-up each, then rounds of every shape in turn (as the baseline).
  const countSamples = {}
  for (const key of countPlan) {
    const first = await timedRequest(
      server.url,
      'POST',
      '/api/v1/contacts/count',
      apiKey,
      filters[key].filter,
    )
    if (first.status !== 200) {
      counts[key] = { state: stateOf(first) }
      problems.push(`POST /contacts/count (${key}): ${first.status} ${first.text.slice(0, 200)}`)
      continue
    }
    counts[key] = { state: 'ok', count: first.json.count }
    countSamples[key] = []
    if (first.json.count !== expected[key].members) {
      problems.push(
        `POST /contacts/count (${key}) answered ${first.json.count}, the facets hold ${expected[key].members}`,
      )
    }
  }
  for (let i = 0; i < rounds; i++) {
    for (const key of Object.keys(countSamples)) {
      const answer = await timedRequest(
        server.url,
        'POST',
        '/api/v1/contacts/count',
        apiKey,
        filters[key].filter,
      )
      if (answer.status !== 200 && counts[key].state === 'ok') {
        counts[key].state = stateOf(answer)
        problems.push(
          `POST /contacts/count (${key}), round ${i + 1}: ${answer.status} ${answer.text.slice(0, 200)}`,
        )
      }
      countSamples[key].push(answer.ms)
    }
  }
  for (const key of Object.keys(countSamples)) {
    Object.assign(counts[key], summary(countSamples[key]))
    progress(`count ${key}: ${counts[key].count}, p50 ${counts[key].p50.toFixed(1)} ms`)
  }
  if (counts.count3.count !== undefined && counts.count3.count !== baseline.naive3.count) {
    problems.push(
      `the three-key count ${counts.count3.count} differs from the hand-written SQL's ${baseline.naive3.count}`,
    )
  }

  // The 100 k list: save, then refreshes; the 1 M list: save, one refresh.
  lists.list100k = await saveAndRefresh('list100k', 'Bench 100k', refreshRounds)
  lists.list1m = await saveAndRefresh('list1m', 'Bench 1M', 1)
  // Exports: the 1 M list (the target), and the 100 k one to show the memory does not follow the size.
  for (const key of ['list1m', 'list100k']) {
    if (lists[key]?.list) exports[key] = await exportList(key, lists[key].list)
  }
} finally {
  await server.stop()
}

// The parts the refreshes left (list_members: one insert per refresh, and the deletes of old snapshots).
{
  const lock = lockDataDir(dataDir)
  const store = createStore({ database: 'default', dataDir })
  try {
    partsAfter = await activeParts(store)
    const [row] = await store.query(
      'SELECT count() AS rows, uniqExact(list_id, snapshot) AS snapshots FROM list_members',
    )
    listMembersAfter = { rows: Number(row.rows), snapshots: Number(row.snapshots) }
    progress(
      `after the run: parts ${JSON.stringify(partsAfter)}, list_members ${JSON.stringify(listMembersAfter)}`,
    )
  } finally {
    await store.close()
    lock.release()
  }
}
if (!removeAtEnd) progress(`the data directory stays: ${dataDir} (reuse it with --data)`)

/** --export-rounds downloads of the list's audience export, each checked; the successful ones. */
async function exportList(key, list) {
  const results = []
  const exportPath = `/api/v1/lists/${encodeURIComponent(list.id)}/chat-ads-export?organizationId=${organizationId}`
  for (let i = 0; i < exportRounds; i++) {
    // Let the server settle, so "before" is its resting RSS.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const result = await streamExport(server.url, exportPath, apiKey, server.pid)
    if (result.status !== 200) {
      problems.push(
        `GET /lists/{id}/chat-ads-export (${key}): ${result.status} ${result.errorBody.slice(0, 200)}`,
      )
      break
    }
    results.push(result)
    const header = result.headers['x-unique-email-count']
    progress(
      `export ${key} ${i + 1}: ${result.rows} rows in ${(result.totalMs / 1000).toFixed(2)} s ` +
        `(${Math.round(result.rows / (result.totalMs / 1000))} rows/s), X-Unique-Email-Count ${header}, ` +
        `RSS ${mb(result.rssBefore)} -> peak ${mb(result.rssPeak)}`,
    )
    if (header === undefined) problems.push(`the export (${key}) has no X-Unique-Email-Count header`)
    else if (Number(header) !== result.rows) {
      problems.push(`the export (${key}): X-Unique-Email-Count ${header} but ${result.rows} data lines`)
    }
    if (result.rows !== expected[key].emails) {
      problems.push(
        `the export (${key}) has ${result.rows} rows, the list's members have ${expected[key].emails} distinct email hashes`,
      )
    }
    if (result.headerLine !== 'email_sha256') {
      problems.push(`the export's (${key}) first line is ${JSON.stringify(result.headerLine)}`)
    }
    if (result.rows > 0 && !/^[0-9a-f]{64}$/.test(result.firstRow)) {
      problems.push(`the export's (${key}) first row is ${JSON.stringify(result.firstRow)}`)
    }
  }
  return results
}

/** `POST /lists/save` for the filter `key`, then `refreshes` timed `POST /lists/refresh/{id}`. */
async function saveAndRefresh(key, listName, refreshes) {
  const { filter } = filters[key]
  const body = { organizationId, listName, contacts_found: expected[key].members, filter }
  const save = await timedRequest(server.url, 'POST', '/api/v1/lists/save', apiKey, body)
  if (save.status < 200 || save.status > 299 || !save.json?.id) {
    problems.push(`POST /lists/save (${key}): ${save.status} ${save.text.slice(0, 200)}`)
    return { state: stateOf(save) }
  }
  progress(`save ${key}: ${save.status} in ${save.ms.toFixed(0)} ms, ${JSON.stringify(save.json)}`)
  checkList(`POST /lists/save (${key})`, save.json, key)
  const samples = []
  let list = save.json
  for (let i = 0; i < refreshes; i++) {
    const answer = await timedRequest(
      server.url,
      'POST',
      `/api/v1/lists/refresh/${encodeURIComponent(save.json.id)}`,
      apiKey,
      { organizationId },
    )
    if (answer.status < 200 || answer.status > 299) {
      problems.push(`POST /lists/refresh/{id} (${key}): ${answer.status} ${answer.text.slice(0, 200)}`)
      return { state: stateOf(answer), saveMs: save.ms, saveStatus: save.status, list }
    }
    samples.push(answer.ms)
    list = answer.json
    checkList(`POST /lists/refresh/{id} (${key})`, list, key)
    progress(`refresh ${key} ${i + 1}: ${answer.status} in ${answer.ms.toFixed(0)} ms`)
  }
  return { state: 'ok', saveMs: save.ms, saveStatus: save.status, list, ...summary(samples), samples }
}

function checkList(what, list, key) {
  if (list.contactsNum !== expected[key].members) {
    problems.push(`${what}: contactsNum ${list.contactsNum}, the facets hold ${expected[key].members}`)
  }
  if (list.organizationId !== organizationId) problems.push(`${what}: organizationId ${list.organizationId}`)
}

function stateOf(answer) {
  if (isRouteNotFound(answer.status, answer.text)) return 'not built yet'
  return `failed: ${answer.status} ${answer.text.slice(0, 200)}`
}

// --- Report ----------------------------------------------------------------------------------------
function mb(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`
}
const ms = (value) => (value === undefined ? '-' : value < 10 ? value.toFixed(2) : value.toFixed(1))
const n = (value) => Number(value).toLocaleString('en')
const ratio = (a, b) => (a / b >= 10 ? (a / b).toFixed(0) : (a / b).toFixed(2))
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim()
const dirty = git('status', '--porcelain', '--', 'packages').length > 0
const migrations = readdirSync(path.join(root, 'packages/core/migrations')).filter((name) =>
  name.endsWith('.sql'),
)
const cpus = os.cpus()
const c = dataset.counts
const command = `node bench/lists/lists.bench.mjs ${process.argv.slice(2).join(' ')}`.trim()
const filterText = (key) => `\`${JSON.stringify(filters[key].filter)}\``
const met = (ok) => (ok ? 'met' : '**not met**')

const lines = [
  `### ${startedAt.toISOString().slice(0, 10)}, ${n(totalContacts)} contacts, ${rounds} rounds`,
  '',
  `- Machine: ${cpus.length} vCPU (${cpus[0]?.model.trim() ?? 'unknown'}), ${mb(os.totalmem())} RAM, Node ${process.version}, ClickHouse (chdb) ${engineVersion}; load average ${loadAtStart} at the start, ${loadAverage()} at the end`,
  `- Code: ${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes under packages/' : ''}; migrations up to ${migrations.sort().at(-1)}`,
  `- Command: \`${command}\``,
  `- Dataset (${reused ? 'reused' : `filled in ${dataset.fillSeconds.toFixed(0)} s`}, ending ${dataset.endedAt}): ` +
    `${n(c.contacts)} contacts (${(c.enrichedShare * 100).toFixed(1)} % with an email, ${(c.personalOnlyShare * 100).toFixed(1)} % of them a personal one only; ` +
    `${n(c.contactKeys)} rows in contact_keys, ${n(c.facets)} in contact_facets), ${n(c.companies)} companies, ` +
    `${n(c.visitors)} identified visitors of the organization` +
    (!reused
      ? `; contacts inserted in ${(dataset.times.contacts / 1000).toFixed(0)} s (1 M per insert), background merges done ${(dataset.times.merges / 1000).toFixed(0)} s later`
      : ''),
  `- Active parts when measuring: ${Object.entries(partsBefore)
    .map(([table, parts]) => `${table} ${parts}`)
    .join(
      ', ',
    )} (after ${(mergesMs / 1000).toFixed(0)} s of waiting for merges; 3 s without any is the least)`,
  `- Active parts after the run: ${Object.entries(partsAfter)
    .map(([table, parts]) => `${table} ${parts}`)
    .join(
      ', ',
    )}; list_members holds ${n(listMembersAfter.rows)} rows in ${listMembersAfter.snapshots} snapshots`,
  ...(migrated.applied.length > 0
    ? [
        `- Migrations applied to the reused store before measuring: ${migrated.applied.join(', ')} (${migrated.seconds.toFixed(0)} s)`,
      ]
    : []),
  '',
  'Baseline, through the store in the benchmark process, one query at a time, ms:',
  '',
  '| query | count | p50 | p95 |',
  '|---|---:|---:|---:|',
  ...baselinePlan.map(({ key }) => {
    const b = baseline[key]
    return `| ${b.label} | ${n(b.count)} | ${ms(b.p50)} | ${ms(b.p95)} |`
  }),
  '',
  `Three-key filter: ${filterText('count3')}.`,
  '',
  '`POST /api/v1/contacts/count`, one request at a time, ms (target: p50 <= 100 ms for three keys):',
  '',
  '| filter | count | p50 | p95 | p50 / hand-written SQL p50 | p50 / `count()` p50 | target |',
  '|---|---:|---:|---:|---:|---:|---|',
  ...countPlan.map((key) => {
    const r = counts[key]
    if (r?.state !== 'ok') return `| ${filters[key].label} | ${r?.state ?? 'not run'} | | | | | |`
    return `| ${filters[key].label} | ${n(r.count)} | ${ms(r.p50)} | ${ms(r.p95)} | ${ratio(r.p50, baseline.naive3.p50)} | ${ratio(r.p50, baseline.plain.p50)} | ${key === 'count3' ? met(r.p50 <= 100) : ''} |`
  }),
  '',
  `Other shapes: contact only ${filterText('contact3')}, one company key ${filterText('company1')}, no filter \`{}\`. ` +
    `The hand-written SQL counts only the three-key filter; its ratio is given for every shape as a scale. ` +
    `The three-key count ${counts.count3?.count === baseline.naive3.count ? 'equals' : '**differs from**'} the hand-written SQL's.`,
  '',
  ...listReport(),
  '',
  ...exportReport(),
  '',
  ...(problems.length > 0
    ? ['Problems found:', '', ...problems.map((p) => `- ${p}`)]
    : ['No problems found: status codes, counts, `contactsNum` and `X-Unique-Email-Count` as expected.']),
]
console.log(lines.join('\n'))
process.exit(problems.length > 0 ? 1 : 0)

function listReport() {
  const r = lists.list100k
  const head = `List refresh, ${filterText('list100k')} (${n(expected.list100k.members)} members, ${n(expected.list100k.emails)} distinct email hashes; target: <= 5 s):`
  if (r?.state !== 'ok') return [head, '', `- ${r?.state ?? 'not run'}`]
  const one = lists.list1m
  return [
    head,
    '',
    `- \`POST /api/v1/lists/save\` (creates the list and refreshes it): ${r.saveStatus} in ${ms(r.saveMs)} ms; ` +
      `contactsNum ${n(r.list.contactsNum)}, matchedContactsNum ${n(r.list.matchedContactsNum)}, autoUpdateStatus \`${r.list.autoUpdateStatus}\``,
    `- \`POST /api/v1/lists/refresh/{id}\`, ${r.n} rounds: p50 **${ms(r.p50)} ms**, p95 ${ms(r.p95)} ms ` +
      `(${r.samples.map((s) => s.toFixed(0)).join(', ')}) - ${met(r.p50 <= 5000)}; p50 / the three-key count's p50 ${ratio(r.p50, counts.count3?.p50 ?? Number.NaN)}`,
    ...(one?.state === 'ok'
      ? [
          `- For scale, the 1 M list ${filterText('list1m')}: save ${ms(one.saveMs)} ms, refresh ${ms(one.p50)} ms ` +
            `(contactsNum ${n(one.list.contactsNum)}, matchedContactsNum ${n(one.list.matchedContactsNum)})`,
        ]
      : []),
  ]
}

function exportReport() {
  const head =
    'Audience export (`GET /api/v1/lists/{id}/chat-ads-export?organizationId={org}`), read as a stream and counted ' +
    'line by line, server RSS sampled every 100 ms (target: >= 100,000 rows/s for the 1 M list, flat memory):'
  const quarterPeaks = (run) =>
    [0, 1, 2, 3].map((q) => {
      const inQuarter = run.samples
        .filter((s) => s.ms >= (q * run.totalMs) / 4 && s.ms <= ((q + 1) * run.totalMs) / 4)
        .map((s) => s.rss)
        .filter(Number.isFinite)
      return inQuarter.length > 0 ? mb(Math.max(...inQuarter)) : '-'
    })
  const section = (key, title) => {
    const runs = exports[key]
    const what = `${title} (${n(expected[key].members)} members, ${n(expected[key].emails)} distinct email hashes)`
    if (lists[key]?.state !== 'ok') return [`- ${what}: not run, the list could not be saved`]
    if (runs.length === 0) return [`- ${what}: failed (see the problems below)`]
    const rates = runs.map((x) => x.rows / (x.totalMs / 1000))
    const e = runs[0]
    return [
      `- ${what}: ${e.status}, \`${e.headers['content-type']}\`, \`X-Unique-Email-Count: ${e.headers['x-unique-email-count']}\`, ` +
        `${n(e.rows)} data lines, ${mb(e.bytes)}`,
      `  - ${runs.length} rounds: ${runs.map((x) => `${(x.totalMs / 1000).toFixed(2)} s`).join(', ')}; ` +
        `median **${n(Math.round(median(rates)))} rows/s** (${rates.map((r) => n(Math.round(r))).join(', ')})` +
        (key === 'list1m' ? ` - ${met(median(rates) >= 100_000)}` : ''),
      `  - headers after ${runs.map((x) => ms(x.headersMs)).join(' / ')} ms, first byte of the body after ${runs.map((x) => ms(x.firstByteMs)).join(' / ')} ms`,
      ...runs.map(
        (x, i) =>
          `  - server RSS, round ${i + 1}: ${mb(x.rssBefore)} before, peak ${mb(x.rssPeak)} (+${mb(x.rssPeak - x.rssBefore)}), ${mb(x.rssAfter)} after; ` +
          `peak per quarter of the download ${quarterPeaks(x).join(' / ')} (${x.samples.length} samples)`,
      ),
    ]
  }
  return [
    head,
    '',
    ...section('list1m', 'The 1 M list'),
    ...section('list100k', 'For comparison, the 100 k list'),
  ]
}
