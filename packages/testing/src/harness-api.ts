// What a test gets from `startHarness`: the started server, its store and repositories, a keyed
// request and the fixtures. Its own module so the fixtures (harness-fixtures.ts) and the harness
// that puts them together (harness.ts) both depend on it, and not on each other.
import type { Scope } from '@visitor-id/core/access'
import type { BillingDeps } from '@visitor-id/core/billing'
import type { IcpConfigKind } from '@visitor-id/core/icp'
import type { FlowDeps } from '@visitor-id/core/integrations'
import type { BootstrapFile } from '@visitor-id/core/organizations'
import type { Repositories } from '@visitor-id/core/repositories'
import type { Store } from '@visitor-id/core/store'
import type { VisitorRow } from '@visitor-id/core/visitor-tracking'
import type { RunningServer } from '@visitor-id/server'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'

export interface Harness {
  server: RunningServer
  repos: Repositories
  store: Store
  /** The bootstrap agency organization, its admin key (with agency scopes) and its partner key. */
  boot: BootstrapFile
  /** `app.inject` with the key of `as` (default: the bootstrap admin key) in X-API-Key. */
  request(
    options: InjectOptions & { key?: string | null; partnerKey?: string },
  ): Promise<LightMyRequestResponse>
  /** A new organization key; `expiresAt` may lie in the past (the store takes it as given). */
  createKey(
    organizationId: string,
    scopes: Scope[],
    expiresAt?: string,
  ): Promise<{ id: string; plainKey: string }>
  /**
   * A new organization (not a sub-organization of the bootstrap agency) with an admin key; its
   * ledger opens with INITIAL_CREDITS, as POST /organization's does.
   */
  createTenant(options?: { plusEmployee?: boolean }): Promise<{ organizationId: string; key: string }>
  /** A user who is a plain member of the organization. */
  addMember(organizationId: string): Promise<string>
  /** A new ICP config of the organization (no recalculation is asked); returns its slug. */
  createIcpConfig(organizationId: string, kind: IcpConfigKind): Promise<string>
  /**
   * Page views of one visitor in one session, straight into the store (the views make the session
   * and the visitor facts): from Germany with `utm_source=news` unless told otherwise, and with the
   * company ingest would attribute to its IP, if any. The statistics count them at once (first_hours
   * settled, as the worker's pass would within ANALYTICS_SETTLE_INTERVAL_MS).
   */
  seedVisitor(
    organizationId: string,
    pages?: number,
    options?: { visitorId?: string; country?: string; utmSource?: string; companyId?: string },
  ): Promise<{ visitorId: string; sessionId: string }>
  /**
   * A saved list of the organization over every contact, with at least one contact with an email
   * (one is imported the first time), so its export has lines; returns its id.
   */
  createList(organizationId: string): Promise<string>
  /**
   * A visitor of the organization identified as a person with a LinkedIn URL (a visitors row and
   * a page view), ready for a phone search; returns its id.
   */
  seedPerson(organizationId: string, fields?: Partial<VisitorRow>): Promise<string>
  /**
   * A delivery of an event to the partner's identification webhook and its first (failed) attempt,
   * as the dispatcher writes them; returns the log entry's id.
   */
  seedWebhookLog(partnerId: string): Promise<string>
  /** An imported company with these fields; returns its id. */
  seedCompany(fields: Record<string, string>): Promise<string>
  /**
   * A checkout of the standard plan (local provider) the organization confirmed on its page and the
   * operator approved (`approveCheckout`, as `billing approve` does: a plan with a price waits for
   * it), so it is complete; an active subscription it had is ended first. Returns the session id.
   */
  completedCheckout(organizationId: string, priceId?: string): Promise<string>
  /** The billing service the server uses (the local provider unless the test set BILLING_PROVIDER). */
  billing: BillingDeps
  /** The integration services the server uses. */
  integrations: FlowDeps
  /**
   * The organization's `searchAds` integration as connected, straight into the store (tokens sealed
   * as installation seals them, valid an hour): ads accounts `1234567890` and `2222222222`.
   */
  connectIntegration(organizationId: string): Promise<void>
  /** A flow of the organization (a list's refresh syncs it to `searchAds`); returns its id. */
  createFlow(organizationId: string): Promise<string>
  /** Makes the organization subscribed (a processed local checkout), unless it already is. */
  subscribe(organizationId: string): Promise<void>
  /** Ends the organization's subscription (its copy says canceled), as a provider would at a period end. */
  endSubscription(organizationId: string): Promise<void>
  /**
   * Stops the server and starts a new one on the same data directory, as a restart would: what was
   * in memory (jobs, locks, caches) is gone, what was stored is read again. The harness's fields
   * point at the new server afterwards.
   */
  restart(): Promise<void>
  stop(): Promise<void>
}
