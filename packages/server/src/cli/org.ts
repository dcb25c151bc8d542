// `org create`: an organization, its owner and pixel config.
import { parseArgs } from 'node:util'
import { createOrganization, createUser } from '@visitor-id/core/organizations'
import { type CommandRun, type Out, withRepos } from './command-run.js'
import { UsageError } from './usage.js'

export async function orgCreate(run: CommandRun, args: string[], out: Out) {
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
