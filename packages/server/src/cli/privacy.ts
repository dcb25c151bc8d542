// `privacy erase | export`: a person's erasure or the export of what is held about them, for one
// organization, named by exactly one of --email, --email-sha256 and --visitor-id (core privacy/).
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createErasedVisitors, erasePerson, exportPerson, personKeySchema } from '@visitor-id/core/privacy'
import { type CommandRun, type Out, withRepos } from './command-run.js'
import { asUsage, UsageError } from './usage.js'

export async function privacyCommand(run: CommandRun, sub: string | undefined, args: string[], out: Out) {
  if (sub !== 'erase' && sub !== 'export') throw new UsageError('privacy needs a command: erase or export')
  const { values } = parseArgs({
    args,
    options: {
      org: { type: 'string' },
      email: { type: 'string' },
      'email-sha256': { type: 'string' },
      'visitor-id': { type: 'string' },
      out: { type: 'string' },
    },
  })
  if (!values.org) throw new UsageError(`privacy ${sub} needs --org ORG_ID`)
  if (sub === 'erase' && values.out !== undefined) throw new UsageError('privacy erase takes no --out')
  const parsed = personKeySchema.safeParse({
    email: values.email,
    emailSha256: values['email-sha256'],
    visitorId: values['visitor-id'],
  })
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = { email: '--email', emailSha256: '--email-sha256', visitorId: '--visitor-id' }[
      String(issue?.path[0]) as 'email'
    ]
    throw new UsageError(
      field
        ? `${field} ${issue?.message}`
        : `privacy ${sub} needs exactly one of --email, --email-sha256 and --visitor-id`,
    )
  }
  const key = parsed.data
  const result = await withRepos(run, (repos, store, coordination) =>
    asUsage(async () => {
      const organization = await repos.organizations
        .get({ id: values.org!.toLowerCase() })
        .catch(() => undefined)
      if (!organization) throw new UsageError(`No organization ${values.org}`)
      if (sub === 'export') return exportPerson({ store, repos }, organization.id, key)
      // In the server, its own set (ingest's); here, one that tells the running servers (pubsub).
      const erasedVisitors =
        run.context?.erasedVisitors ?? createErasedVisitors(store, { pubsub: coordination.pubsub })
      return erasePerson(
        {
          store,
          repos,
          locks: coordination.locks,
          erasedVisitors,
          pendingHitsMs: run.config.ingest.batchMs + 1000,
        },
        organization.id,
        key,
        'cli',
      )
    }),
  )
  const text = JSON.stringify(result, null, 2)
  if (sub === 'export' && values.out) {
    const file = path.resolve(run.cwd, values.out)
    writeFileSync(file, `${text}\n`, { mode: 0o600 })
    out(`wrote ${file}`)
    return
  }
  out(text)
}
