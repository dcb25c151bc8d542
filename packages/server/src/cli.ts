import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { inspect, parseArgs } from 'node:util'
import {
  type ApiKeyRow,
  AppError,
  approveCheckout,
  type Config,
  ConfigError,
  type Coordination,
  createApiKey,
  createOrganization,
  createPartnerKey,
  createReadModel,
  createRepositories,
  createUser,
  creditBalance,
  DataDirLockedError,
  grantCredits,
  scopes as knownScopes,
  listPartnerKeys,
  migrate,
  pendingApprovals,
  type Repositories,
  revokePartnerKey,
  type Scope,
  type Store,
} from '@visitor-id/core'
import {
  announceImportApplied,
  createProgressBar,
  type ImportKind,
  type ImportReport,
  importCompanies,
  importCompanyIps,
  importContacts,
} from '@visitor-id/ingest'
import { createBillingDeps, createCoordination } from './adapters.js'
import { type AdminReply, type AdminRequest, adminSocketPath, sendAdminCommand } from './admin-socket.js'
import { seedDemo } from './demo.js'
import { openStore } from './open-store.js'

export const usage = `Usage: visitor-id <command> [options]   (from the repo: npm run cli -- <command>)

Commands:
  serve [--role all|ingest|api|worker]   start the service (default role: all)
  migrate                                apply pending migrations and exit
  org create --name NAME [--domain DOMAIN] [--owner-email EMAIL] [--plus-employee] [--agency]
                                         create an organization, its owner and pixel config
  keys create --org ORG_ID [--name NAME] [--scopes read,write] [--expires-at ISO8601]
                                         create an organization API key (printed once)
  partner-keys create --partner PARTNER_ID [--name NAME] [--scopes read,write] [--expires-at ISO8601]
                                         create a partner API key (printed once); scopes among
                                         read, write, admin
  partner-keys list --partner PARTNER_ID
                                         list the partner's keys: id, name, prefix, scopes,
                                         status (active, expired, revoked), expiry; no secrets
  partner-keys revoke --partner PARTNER_ID --key KEY_ID
                                         revoke a partner key (401 from then on)
  credits grant --org ORG_ID --amount N [--reason TEXT]
                                         add N identification credits (a positive integer) to
                                         the organization's ledger; prints the new balance
  credits balance --org ORG_ID           print the organization's identification credit balance
  billing pending                        list the checkouts and plan changes of plans with a price
                                         waiting for approval (BILLING_PROVIDER=local)
  billing approve CHECKOUT_SESSION_ID    approve one: the subscription starts (or changes plan)
                                         at once, with the plan's credits and product type
  import company-ips FILE [--replace] [--rejects OUT.csv]
                                         import company IP ranges (CSV or JSONL: cidr, company_id)
  import companies FILE [--rejects OUT.csv]
                                         import companies (CSV or JSONL: id, name, domain, ...)
  import contacts FILE [--rejects OUT.csv]
                                         import contacts (CSV or JSONL: email, personal_email,
                                         first_name, ..., company_id or company_domain)
  seed-demo [--org ORG_ID] [--visitors N]
                                         fill an organization (default: the bootstrap one) with
                                         demo companies, contacts, visitors over 30 days,
                                         identifications and a scored ICP config (N default 500)
  help                                   show this text

Settings come from environment variables (see README).`

/** A usage problem: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

type Out = (line: string) => void

/** A running server's store, repositories (its read model) and coordination. */
export interface CommandContext {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
  /** Applies a finished import in the server (its caches) and announces it to the other processes. */
  importFinished?: (kind: ImportKind) => Promise<void>
}

/** How one command runs: in the CLI's own process, or in the server that owns the data directory. */
interface CommandRun {
  config: Config
  /** File names on the command line are relative to this directory. */
  cwd: string
  /** Given by the server (admin socket); unset: the command opens the store itself. */
  context?: CommandContext
  /** Where an import draws its progress bar (a terminal); unset in the server. */
  progress?: NodeJS.WriteStream
}

/**
 * Runs `work` on the server's store when the command came through its admin socket, otherwise on
 * the store opened here. Writes are announced as a server announces its own (pub/sub, Redis when
 * REDIS_URL is set), so servers running on the same ClickHouse server drop their copies at once.
 */
async function withRepos<T>(
  run: CommandRun,
  work: (repos: Repositories, store: Store, coordination: Coordination) => Promise<T>,
): Promise<T> {
  if (run.context) return work(run.context.repos, run.context.store, run.context.coordination)
  const config = run.config
  const { store, lock } = openStore(config)
  const coordination = createCoordination(config)
  try {
    await migrate(store)
    const reachable = coordination.kind === 'memory' || (await coordination.ping())
    if (!reachable) {
      console.warn(
        'visitor-id: Redis at REDIS_URL is not answering: running servers see this change within ENTITY_CACHE_TTL_MS',
      )
    }
    const readModel = reachable ? createReadModel({ pubsub: coordination.pubsub }) : undefined
    return await work(createRepositories(store, readModel), store, coordination)
  } finally {
    await coordination.close()
    await store.close()
    lock?.release()
  }
}

/** Runs `work` on the server's store, or on the store opened (and migrated) here. */
async function withStore<T>(run: CommandRun, work: (store: Store) => Promise<T>): Promise<T> {
  if (run.context) return work(run.context.store)
  const { store, lock } = openStore(run.config)
  try {
    return await work(store)
  } finally {
    await store.close()
    lock?.release()
  }
}

async function orgCreate(run: CommandRun, args: string[], out: Out) {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      domain: { type: 'string' },
      'owner-email': { type: 'string' },
      'plus-employee': { type: 'boolean' },
      agency: { type: 'boolean' },
    },
  })
  if (!values.name?.trim()) throw new UsageError('org create needs --name')
  const result = await withRepos(run, async (repos, store) => {
    const user = await createUser(repos, { email: values['owner-email'] ?? 'owner@localhost' })
    const { organization, pixelConfig } = await createOrganization(repos, {
      name: values.name!.trim(),
      ownerUserId: user.id,
      ...(values.domain ? { domain: values.domain } : {}),
      productType: values['plus-employee'] ? 'plus_employee' : 'standard',
      isAgency: values.agency ?? false,
      initialCredits: { store, amount: run.config.initialCredits },
    })
    return { organizationId: organization.id, userId: user.id, trackingKey: pixelConfig.tracking_key }
  })
  out(JSON.stringify(result, null, 2))
}

async function keysCreate(run: CommandRun, args: string[], out: Out) {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
    },
  })
  if (!values.org) throw new UsageError('keys create needs --org ORG_ID')
  const scopes = (values.scopes ?? 'read,write').split(',').map((s) => s.trim())
  const unknown = scopes.filter((s) => !knownScopes.includes(s as Scope))
  if (unknown.length > 0) throw new UsageError(`Unknown scope(s): ${unknown.join(', ')}`)
  const expiresAt = values['expires-at']
  if (expiresAt !== undefined && !(Date.parse(expiresAt) > Date.now())) {
    throw new UsageError('--expires-at must be an ISO 8601 time in the future')
  }
  const result = await withRepos(run, async (repos) => {
    const organization = await repos.organizations
      .get({ id: values.org!.toLowerCase() })
      .catch(() => undefined)
    if (!organization) throw new UsageError(`No organization ${values.org}`)
    const owner = (
      await repos.memberships.find({ organization_id: organization.id, role: 'owner' }, { limit: 1 })
    )[0]
    const { apiKey, plainKey } = await createApiKey(repos, {
      organizationId: organization.id,
      createdByUserId: owner?.user_id ?? null,
      name: values.name ?? 'CLI key',
      scopes,
      expiresAt: expiresAt ? new Date(expiresAt).toISOString() : null,
    })
    return { id: apiKey.id, keyPrefix: apiKey.key_prefix, scopes, plainKey }
  })
  out(JSON.stringify(result, null, 2))
}

/** Runs a core service; its refusals (unknown partner, bad scope, ...) are usage errors, not crashes. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof AppError && error.statusCode < 500) throw new UsageError(error.message)
    throw error
  }
}

/** A partner key as the CLI shows it: never the hash, never the full key. */
function shownPartnerKey(row: ApiKeyRow, now = Date.now()) {
  const expired = row.expires_at !== null && Date.parse(row.expires_at) <= now
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    status: row.status === 'active' && expired ? 'expired' : row.status,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  }
}

async function partnerKeysCommand(run: CommandRun, sub: string | undefined, args: string[], out: Out) {
  const { values } = parseArgs({
    args,
    options: {
      partner: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
      key: { type: 'string' },
    },
  })
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') {
    throw new UsageError('partner-keys needs a command: create, list or revoke')
  }
  const partnerId = values.partner
  if (!partnerId) throw new UsageError(`partner-keys ${sub} needs --partner PARTNER_ID`)
  const takes: Record<typeof sub, string[]> = {
    create: ['partner', 'name', 'scopes', 'expires-at'],
    list: ['partner'],
    revoke: ['partner', 'key'],
  }
  const misplaced = Object.keys(values).filter((option) => !takes[sub].includes(option))
  if (misplaced.length > 0) throw new UsageError(`partner-keys ${sub} takes no --${misplaced.join(', --')}`)
  if (sub === 'revoke' && !values.key) throw new UsageError('partner-keys revoke needs --key KEY_ID')
  const result = await withRepos(run, (repos) =>
    asUsage(async () => {
      if (sub === 'list') return (await listPartnerKeys(repos, partnerId)).map((row) => shownPartnerKey(row))
      if (sub === 'revoke') return shownPartnerKey(await revokePartnerKey(repos, partnerId, values.key!))
      const { apiKey, plainKey } = await createPartnerKey(repos, {
        partnerId,
        name: values.name ?? 'CLI partner key',
        scopes: (values.scopes ?? 'read,write').split(',').map((s) => s.trim()),
        expiresAt: values['expires-at'] ?? null,
      })
      return { ...shownPartnerKey(apiKey), plainKey }
    }),
  )
  out(JSON.stringify(result, null, 2))
}

async function creditsCommand(run: CommandRun, sub: string | undefined, args: string[], out: Out) {
  const { values } = parseArgs({
    args,
    options: { org: { type: 'string' }, amount: { type: 'string' }, reason: { type: 'string' } },
  })
  if (sub !== 'grant' && sub !== 'balance') throw new UsageError('credits needs a command: grant or balance')
  if (!values.org) throw new UsageError(`credits ${sub} needs --org ORG_ID`)
  const misplaced = Object.keys(values).filter(
    (option) => !(sub === 'grant' ? ['org', 'amount', 'reason'] : ['org']).includes(option),
  )
  if (misplaced.length > 0) throw new UsageError(`credits ${sub} takes no --${misplaced.join(', --')}`)
  let amount = 0
  if (sub === 'grant') {
    if (values.amount === undefined) throw new UsageError('credits grant needs --amount N')
    amount = /^\d+$/.test(values.amount) ? Number(values.amount) : Number.NaN
    if (!(amount > 0)) throw new UsageError('--amount must be a positive integer')
  }
  const result = await withRepos(run, (repos, store) =>
    asUsage(async () => {
      const organization = await repos.organizations
        .get({ id: values.org!.toLowerCase() })
        .catch(() => undefined)
      if (!organization) throw new UsageError(`No organization ${values.org}`)
      if (sub === 'balance') {
        return { organizationId: organization.id, balance: await creditBalance(store, organization.id) }
      }
      const balance = await grantCredits(store, {
        organizationId: organization.id,
        amount,
        reason: values.reason ?? 'granted with the CLI',
      })
      return { organizationId: organization.id, granted: amount, balance }
    }),
  )
  out(JSON.stringify(result, null, 2))
}

/**
 * `billing pending | approve`: with the local provider nobody pays, so a checkout of a plan with a
 * price (or an upgrade) waits for the operator's consent, given here.
 */
async function billingCommand(run: CommandRun, sub: string | undefined, args: string[], out: Out) {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} })
  if (sub !== 'pending' && sub !== 'approve')
    throw new UsageError('billing needs a command: pending or approve')
  if (sub === 'pending' && positionals.length > 0) throw new UsageError('billing pending takes no arguments')
  const sessionId = positionals[0]
  if (sub === 'approve' && (!sessionId || positionals.length > 1 || sessionId.length > 200)) {
    throw new UsageError('billing approve needs one CHECKOUT_SESSION_ID (billing pending lists them)')
  }
  const result = await withRepos(run, (repos, store, coordination) =>
    asUsage(async () => {
      const billing = createBillingDeps({ config: run.config, store, repos, coordination })
      if (sub === 'pending') return pendingApprovals(billing)
      const approved = await approveCheckout(billing, sessionId!)
      return { approved: sessionId, ...approved }
    }),
  )
  out(JSON.stringify(result, null, 2))
}

const shownRejects = 100

/**
 * Makes a finished import apply at once: the server that ran it reloads its caches and tells the
 * others; run here (no server owns the store), it is announced through Redis to the servers on the
 * same ClickHouse server. Without Redis they apply it at their next COMPANY_IPS_REFRESH_MS reload.
 */
async function applyImport(run: CommandRun, kind: ImportKind): Promise<void> {
  if (run.context) {
    await run.context.importFinished?.(kind)
    return
  }
  if (!run.config.redis.url) return
  const coordination = createCoordination(run.config)
  const unannounced = () =>
    console.warn(
      'visitor-id: Redis at REDIS_URL is not answering: running servers apply this import at their next reload (COMPANY_IPS_REFRESH_MS)',
    )
  try {
    // PING first: a publish to a Redis that is down would wait for it to come back.
    if (await coordination.ping()) await announceImportApplied(coordination.pubsub, kind).catch(unannounced)
    else unannounced()
  } finally {
    await coordination.close()
  }
}

async function importCommand(run: CommandRun, kind: string | undefined, args: string[], out: Out) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { replace: { type: 'boolean' }, rejects: { type: 'string' } },
  })
  if (kind !== 'company-ips' && kind !== 'companies' && kind !== 'contacts') {
    throw new UsageError('import needs a dataset: contacts, company-ips or companies')
  }
  const file = positionals[0]
  if (!file || positionals.length > 1) throw new UsageError(`import ${kind} needs one FILE`)
  // Names as given in messages; read and written relative to the CLI's directory (in a server too).
  if (!existsSync(path.resolve(run.cwd, file))) throw new UsageError(`No such file: ${file}`)
  if (values.replace && kind !== 'company-ips') throw new UsageError('--replace applies to company-ips only')
  const bar = run.progress ? createProgressBar(run.progress, `import ${kind}`) : undefined
  let report: ImportReport
  try {
    report = await withStore(run, async (store) => {
      await migrate(store)
      const options = {
        store,
        file: path.resolve(run.cwd, file),
        onProgress: bar?.update ?? (() => {}),
        replace: values.replace ?? false,
      }
      const importers = {
        'company-ips': importCompanyIps,
        companies: importCompanies,
        contacts: importContacts,
      }
      return importers[kind](options)
    })
  } finally {
    bar?.done()
  }
  await applyImport(run, kind)
  if (values.rejects) {
    const lines = report.rejects.map((r) => `${r.line},"${r.reason.replace(/"/g, '""')}"`)
    writeFileSync(
      path.resolve(run.cwd, values.rejects),
      `line,reason\n${lines.join('\n')}${lines.length ? '\n' : ''}`,
    )
  }
  out(
    JSON.stringify(
      {
        ...report,
        rejects: report.rejects.slice(0, shownRejects),
        ...(report.rejected > shownRejects
          ? {
              note: `${report.rejected - shownRejects} more rejected rows${values.rejects ? ` in ${values.rejects}` : ' (use --rejects FILE for all)'}`,
            }
          : {}),
      },
      null,
      2,
    ),
  )
}

async function seedDemoCommand(run: CommandRun, args: string[], out: Out) {
  const { values } = parseArgs({ args, options: { org: { type: 'string' }, visitors: { type: 'string' } } })
  const visitors = Number(values.visitors ?? '500')
  if (!Number.isInteger(visitors) || visitors < 1 || visitors > 100_000) {
    throw new UsageError('--visitors must be a whole number from 1 to 100000')
  }
  const bootstrapFile = path.join(run.config.dataDir, 'bootstrap.json')
  const organizationId =
    values.org ??
    (existsSync(bootstrapFile)
      ? (JSON.parse(readFileSync(bootstrapFile, 'utf8')) as { organizationId: string }).organizationId
      : undefined)
  if (!organizationId)
    throw new UsageError(`seed-demo needs --org ORG_ID (no ${bootstrapFile} to take it from)`)
  const summary = await withRepos(run, async (repos, store, coordination) => {
    const organization = await repos.organizations
      .get({ id: organizationId.toLowerCase() })
      .catch(() => undefined)
    if (!organization) throw new UsageError(`No organization ${organizationId}`)
    return seedDemo({ store, repos, coordination }, { organizationId: organization.id, visitors })
  })
  out(JSON.stringify(summary, null, 2))
}

async function runCommand(run: CommandRun, argv: string[], out: Out): Promise<void> {
  const [command, sub, ...rest] = argv
  if (command === 'migrate') {
    const { applied } = await withStore(run, (store) => migrate(store))
    out(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply')
    return
  }
  if (command === 'org' && sub === 'create') return orgCreate(run, rest, out)
  if (command === 'keys' && sub === 'create') return keysCreate(run, rest, out)
  if (command === 'partner-keys') return partnerKeysCommand(run, sub, rest, out)
  if (command === 'credits') return creditsCommand(run, sub, rest, out)
  if (command === 'billing') return billingCommand(run, sub, rest, out)
  if (command === 'import') return importCommand(run, sub, rest, out)
  if (command === 'seed-demo')
    return seedDemoCommand(run, [sub, ...rest].filter((a) => a !== undefined) as string[], out)
  throw new UsageError(`Unknown command: ${argv.join(' ') || '(none)'}. Run "help" for the list.`)
}

/**
 * Runs one admin command (everything but `serve` and `help`). With the embedded store, a server
 * that owns the data directory runs it (DATA_DIR/admin.sock): its lines are relayed here and its
 * exit code becomes `process.exitCode`. Otherwise the command opens the store itself.
 */
export async function runAdminCommand(config: Config, argv: string[], out: Out): Promise<void> {
  const cwd = process.cwd()
  if (!config.clickhouse.url) {
    const exit = await sendAdminCommand(
      adminSocketPath(config.dataDir),
      { argv, cwd },
      { out, err: (line) => console.error(line) },
    )
    if (exit !== undefined) {
      if (exit !== 0) process.exitCode = exit
      return
    }
  }
  return runCommand({ config, cwd, progress: process.stderr }, argv, out)
}

/** A failed command as `main` shows it: one line for expected failures (exit 2 for usage). */
function failure(error: unknown): { line: string; exit: number } {
  if (error instanceof UsageError) return { line: `visitor-id: ${error.message}`, exit: 2 }
  if (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
    return { line: `visitor-id: ${error.message}`, exit: 2 }
  }
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    return { line: `visitor-id: ${error.message}`, exit: 1 }
  }
  return { line: `visitor-id: failed to start: ${inspect(error)}`, exit: 1 }
}

/** Runs a command received on the admin socket with the server's store; resolves to its exit code. */
export async function serveAdminRequest(
  context: CommandContext,
  request: AdminRequest,
  reply: (reply: AdminReply) => void,
): Promise<number> {
  try {
    await runCommand({ config: context.config, cwd: request.cwd, context }, request.argv, (line) =>
      reply({ out: line }),
    )
    return 0
  } catch (error) {
    const { line, exit } = failure(error)
    reply({ err: line })
    return exit
  }
}
