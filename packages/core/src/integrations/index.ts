// The integration services of a process, built from the configuration (SEARCH_ADS_*, SOCIAL_ADS_*,
// SECRET_KEY, AUDIENCE_BATCH_SIZE): the API routes, the server's OAuth pages and the event consumer
// each build one; they keep nothing in memory.
import type { Config } from '../config.js'
import type { Coordination } from '../coordination/ports.js'
import type { Store } from '../store/client.js'
import type { Repositories } from '../store/entities.js'
import type { FlowDeps } from './flows.js'

export function integrationDeps(deps: {
  config: Config
  store: Store
  repos: Repositories
  coordination: Coordination
}): FlowDeps {
  const { config } = deps
  return {
    store: deps.store,
    repos: deps.repos,
    coordination: deps.coordination,
    locks: deps.coordination.locks,
    settings: config.integrations,
    publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
    allowPrivate: config.webhooks.allowPrivate,
  }
}
