// `seed-demo`: an organization filled with demo data.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { seedDemo } from '../demo.js'
import { type CommandRun, type Out, withRepos } from './command-run.js'
import { UsageError } from './usage.js'

export async function seedDemoCommand(run: CommandRun, args: string[], out: Out) {
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
