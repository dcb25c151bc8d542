// `credits grant | balance`: an organization's identification credit ledger.
import { parseArgs } from 'node:util'
import { creditBalance, grantCredits } from '@visitor-id/core/credits'
import { type CommandRun, type Out, withRepos } from './command-run.js'
import { asUsage, UsageError } from './usage.js'

export async function creditsCommand(run: CommandRun, sub: string | undefined, args: string[], out: Out) {
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
