import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { createApiKey } from '../api-keys/issue.js'
import type { Repositories } from '../repositories.js'
import { createOrganization, createPartner, createUser, type InitialCredits } from './tenancy.js'

/** What the first start writes to `DATA_DIR/bootstrap.json` (mode 0600). */
export interface BootstrapFile {
  organizationId: string
  userId: string
  apiKey: string
  partnerId: string
  partnerKey: string
  trackingKey: string
}

export type BootstrapResult =
  | { created: true; file: string; bootstrap: BootstrapFile }
  | { created: false; file: string; reason: 'file_exists' | 'store_not_empty' }

/**
 * On an empty store: one partner, one agency organization it manages (`plus_employee`), an owner
 * user and an admin key with agency scopes, written to `DATA_DIR/bootstrap.json`. Never
 * overwrites the file and never runs against a store that already has organizations. With
 * `initialCredits` (`INITIAL_CREDITS`), the organization's ledger opens with that grant.
 */
export async function bootstrapIfEmpty(
  repos: Repositories,
  dataDir: string,
  options: { initialCredits?: InitialCredits | undefined } = {},
): Promise<BootstrapResult> {
  const file = path.join(dataDir, 'bootstrap.json')
  if (existsSync(file)) return { created: false, file, reason: 'file_exists' }
  if ((await repos.organizations.count({})) > 0) return { created: false, file, reason: 'store_not_empty' }

  const { partner, plainKey: partnerKey } = await createPartner(repos, { name: 'Default partner' })
  const user = await createUser(repos, { email: 'owner@localhost', name: 'Owner' })
  const { organization, pixelConfig } = await createOrganization(repos, {
    name: 'My agency',
    ownerUserId: user.id,
    productType: 'plus_employee',
    isAgency: true,
    partnerId: partner.id,
    initialCredits: options.initialCredits,
  })
  const { plainKey } = await createApiKey(repos, {
    organizationId: organization.id,
    createdByUserId: user.id,
    name: 'Bootstrap admin key',
    scopes: ['admin', 'agency:read', 'agency:write'],
  })
  const bootstrap: BootstrapFile = {
    organizationId: organization.id,
    userId: user.id,
    apiKey: plainKey,
    partnerId: partner.id,
    partnerKey,
    trackingKey: pixelConfig.tracking_key,
  }
  // 'wx': fail rather than overwrite if another process wrote it meanwhile.
  // With CLICKHOUSE_URL nothing else has made DATA_DIR yet (the embedded store's lock makes it).
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(file, `${JSON.stringify(bootstrap, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
  return { created: true, file, bootstrap }
}
