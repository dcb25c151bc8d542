// `billing pending | approve`: the operator's consent to local checkouts and upgrades.
import { parseArgs } from 'node:util'
import { approveCheckout, pendingApprovals } from '@visitor-id/core/billing'
import { createBillingDeps } from '../adapters.js'
import { type CommandRun, type Out, withRepos } from './command-run.js'
import { asUsage, UsageError } from './usage.js'

/**
 * `billing pending | approve`: with the local provider nobody pays, so a checkout of a plan with a
 * price (or an upgrade) waits for the operator's consent, given here.
 */
export async function billingCommand(run: CommandRun, sub: string | undefined, args: string[], out: Out) {
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
