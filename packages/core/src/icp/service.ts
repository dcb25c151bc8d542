// What the API does with configs: each write, then the scoring it calls for. Creating a config, or
// changing its filter, rules or isActive, recalculates it; turning off or deleting an
// organization-level config re-scores the partner rules that read its results. Turning a config on
// or off, or deleting it, changes who its matches count for (the ICPOnly and personaOnly
// audiences) without a new score: its matched visitors are marked for the statistics' next pass.

import type { Coordination } from '../coordination/ports.js'
import type { Repositories } from '../repositories.js'
import type { Store } from '../store/client.js'
import { markAudienceChanged } from './audience-changes.js'
import {
  changesScores,
  createIcpConfig,
  deleteIcpConfig,
  type IcpConfigFields,
  type IcpConfigKind,
  updateIcpConfig,
} from './configs.js'
import { requestDependentRecalculations, requestRecalculation } from './recalculation.js'
import type { IcpConfigRow } from './rows.js'

export interface IcpServiceDeps {
  store: Store
  repos: Repositories
  coordination: Coordination
}

/** Creates a config and, when it is active, queues its first calculation. */
export async function addIcpConfig(
  deps: IcpServiceDeps,
  organizationId: string,
  kind: IcpConfigKind,
  fields: IcpConfigFields & { name: string },
): Promise<IcpConfigRow> {
  const config = await createIcpConfig(deps.repos, deps.coordination.locks, organizationId, kind, fields)
  if (config.is_active) await requestRecalculation(deps.coordination, config)
  return config
}

/** Updates a config and queues the scoring the change calls for. */
export async function changeIcpConfig(
  deps: IcpServiceDeps,
  config: IcpConfigRow,
  fields: IcpConfigFields,
): Promise<IcpConfigRow> {
  const after = await updateIcpConfig(deps.repos, deps.coordination.locks, config, fields)
  if (config.is_active !== after.is_active) await markAudienceChanged(deps.store, after)
  if (after.is_active && changesScores(config, after)) await requestRecalculation(deps.coordination, after)
  // Turned off: its results stop counting, so partner rules built on them are scored again. (Turned
  // on or changed, its own run asks for them when it ends.)
  if (after.kind === 'organization' && config.is_active && !after.is_active) {
    await requestDependentRecalculations(deps, after.organization_id)
  }
  return after
}

/** Deletes a config; its matches stop counting at once. */
export async function removeIcpConfig(deps: IcpServiceDeps, config: IcpConfigRow): Promise<void> {
  await deleteIcpConfig(deps.repos, config)
  if (config.is_active) await markAudienceChanged(deps.store, config)
  if (config.kind === 'organization' && config.is_active) {
    await requestDependentRecalculations(deps, config.organization_id)
  }
}
