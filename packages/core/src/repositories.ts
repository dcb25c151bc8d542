// The repository of every entity, made once per store: the one module that knows every domain's
// table, so the domain folders need not know each other's (they take `Repositories` as a type).

import {
  type MembershipRow,
  membershipsTable,
  type OrganizationRow,
  organizationsTable,
  type PartnerRow,
  partnersTable,
  type UserRow,
  usersTable,
} from './accounts/rows.js'
import { type ApiKeyRow, apiKeysTable } from './api-keys/rows.js'
import { type CompanyRow, companiesTable } from './companies/rows.js'
import { type IcpConfigRow, icpConfigsTable } from './icp/rows.js'
import { flowsTable, type StoredFlowRow } from './integrations/rows.js'
import { type ListRow, listsTable } from './lists/rows.js'
import { type PrivacySettingsRow, privacySettingsTable } from './privacy/settings.js'
import type { Store } from './store/client.js'
import type { ReadModel } from './store/read-model.js'
import { createEntityRepository, type EntityDefinition, type EntityRepository } from './store/repository.js'
import {
  type PixelConfigRow,
  pixelConfigsTable,
  type VisitorRow,
  visitorsTable,
} from './visitor-tracking/rows.js'
import { type WebhookConfigRow, webhookConfigsTable } from './webhooks/rows.js'

/** Every entity repository, made once per store by the composition root. */
export interface Repositories {
  partners: EntityRepository<PartnerRow>
  organizations: EntityRepository<OrganizationRow>
  users: EntityRepository<UserRow>
  memberships: EntityRepository<MembershipRow>
  apiKeys: EntityRepository<ApiKeyRow>
  pixelConfigs: EntityRepository<PixelConfigRow>
  icpConfigs: EntityRepository<IcpConfigRow>
  lists: EntityRepository<ListRow>
  webhookConfigs: EntityRepository<WebhookConfigRow>
  flows: EntityRepository<StoredFlowRow>
  visitors: EntityRepository<VisitorRow>
  companies: EntityRepository<CompanyRow>
  privacySettings: EntityRepository<PrivacySettingsRow>
}

/**
 * Every entity repository, made once per store. With a read model, the small entities (everything
 * but visitors and companies, which grow with traffic and imports) are read from memory.
 * @example const repos = createRepositories(store, readModel); await repos.organizations.get({ id })
 */
export function createRepositories(store: Store, readModel?: ReadModel): Repositories {
  const small = <Row extends object>(definition: EntityDefinition<Row>): EntityRepository<Row> => {
    const repository = createEntityRepository(store, definition)
    return readModel ? readModel.cached(definition, repository) : repository
  }
  return {
    partners: small(partnersTable),
    organizations: small(organizationsTable),
    users: small(usersTable),
    memberships: small(membershipsTable),
    apiKeys: small(apiKeysTable),
    pixelConfigs: small(pixelConfigsTable),
    icpConfigs: small(icpConfigsTable),
    lists: small(listsTable),
    // Read by the event consumer for every event: from memory, like the other configs.
    webhookConfigs: small(webhookConfigsTable),
    flows: small(flowsTable),
    visitors: createEntityRepository(store, visitorsTable),
    // Not from memory: imports and ingest write companies straight to the store, unannounced.
    companies: createEntityRepository(store, companiesTable),
    privacySettings: small(privacySettingsTable),
  }
}
