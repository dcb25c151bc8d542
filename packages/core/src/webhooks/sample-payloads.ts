// The sample event a test delivery (`POST /partner/webhooks/test`) carries: built by the builders of
// the real events (identificationPayload, billingPayload) from made-up values for every field, so a
// receiver sees exactly what real deliveries will bring, field for field.

import type { OrganizationRow } from '../accounts/rows.js'
import { billingPayload } from '../billing/billing-events.js'
import type { BillingDeps } from '../billing/subscriptions.js'
import type { CompanyRow } from '../companies/rows.js'
import { identificationPayload } from '../identification/payload.js'
import type { VisitorSession } from '../visitor-tracking/visitors.js'
import type { WebhookKind } from './config.js'

const sampleOrganization = (at: string): OrganizationRow => ({
  id: '00000000-0000-4000-8000-00000000000a',
  name: 'Sample workspace',
  domain: 'example.com',
  product_type: 'plus_employee',
  is_agency: false,
  agency_id: null,
  partner_id: null,
  max_overages: null,
  auto_phone_enrichment: false,
  created_by_user_id: null,
  created_at: at,
  updated_at: at,
})

const sampleCompany = (at: string): CompanyRow => ({
  id: 'cmp_example',
  name: 'Example Inc.',
  domain: 'example.com',
  industry: 'Software',
  size: '120',
  employee_size_range: '51-200',
  revenue_range: '$10M-$50M',
  linkedin_url: 'https://www.linkedin.com/company/example',
  website_url: 'https://example.com',
  description: 'Makes example software.',
  logo_url: 'https://example.com/logo.png',
  address: '1 Example Street',
  address_2: 'Suite 100',
  city: 'Berlin',
  region: 'Berlin',
  postal_code: '10115',
  country: 'DE',
  source: 'import',
  created_at: at,
  updated_at: at,
})

/** The session of the sample: every field set, the landing page with its UTM parameters. */
const sampleSession = (at: string, landing: string): VisitorSession => ({
  id: '00000000-0000-4000-8000-000000000002',
  startedAt: at,
  endedAt: at,
  country: 'DE',
  region: 'Berlin',
  city: 'Berlin',
  isp: 'Example Telecom',
  asn: 'AS64496',
  connectionType: 'broadband',
  isHosting: false,
  isAnonymous: false,
  landingPage: landing,
  entryPage: '/pricing',
  exitPage: '/contact',
  referrer: 'https://www.google.com/',
  searchEngine: 'google',
  searchTerm: 'visitor identification',
  utmSource: 'newsletter',
  utmMedium: 'email',
  utmCampaign: 'launch',
  utmTerm: 'b2b',
  utmContent: 'header',
  deviceType: 'desktop',
  userAgent:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
  browser: 'Chrome',
  browserVersion: '130.0',
  os: 'Windows',
  osVersion: '10',
  deviceModel: 'PC',
  screenWidth: 1920,
  screenHeight: 1080,
  language: 'de-DE',
  timezone: 'Europe/Berlin',
  ipAddress: '203.0.113.7',
  sessionDurationSeconds: 184,
  pageViewCount: 3,
  maxScrollPercent: 80,
  trackingParams: { gclid: 'sample-gclid' },
})

/** `visitor.identified` of a made-up visitor; its phone is '' as in every real one (phones are paid). */
function sampleIdentification(at: string) {
  const organization = sampleOrganization(at)
  const landing = 'https://example.com/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=launch'
  return identificationPayload({
    eventType: 'visitor.identified',
    timestamp: at,
    organization,
    ipTracking: true,
    visitor: {
      id: '00000000-0000-4000-8000-000000000001',
      email: 'jane.doe@example.com',
      first_name: 'Jane',
      last_name: 'Doe',
      job_title: 'VP Engineering',
      linkedin_url: 'https://www.linkedin.com/in/jane-doe-example',
      created_at: at,
      last_seen_at: at,
      personal_email: 'jane@example.org',
      facebook_url: 'https://www.facebook.com/jane.doe.example',
      twitter_url: 'https://x.com/janedoeexample',
      photo_url: 'https://example.com/jane.jpg',
      location: 'Berlin, Germany',
      address: '2 Sample Road',
      address_2: 'Floor 3',
      city: 'Berlin',
      state: 'Berlin',
      postal_code: '10117',
      gender: 'female',
      age_range: '35-44',
      income_range: '$150K-$200K',
      net_worth: '$500K-$1M',
      homeowner: 'yes',
      married: 'yes',
      children: 'no',
    },
    icp: { icp: true, icpStatuses: { 'enterprise-us': true }, personaMatch: true },
    company: sampleCompany(at),
    session: sampleSession(at, landing),
    firstVisit: true,
    pageViews: [
      { url: landing, visitedAt: at },
      { url: 'https://example.com/contact', visitedAt: at },
    ],
  })
}

/** `invoice.paid` of a made-up renewal of the first B2B plan (else the first plan) of this server. */
function sampleBilling(plans: BillingDeps['plans'], at: string) {
  const plan = plans.find((p) => p.productType === 'plus_employee') ?? plans[0]!
  const periodEnd = new Date(Date.parse(at) + 30 * 86_400_000).toISOString()
  return billingPayload(
    { plans },
    {
      type: 'invoice.paid',
      subject: 'in_sample',
      organization: sampleOrganization(at),
      subscription: {
        organization_id: sampleOrganization(at).id,
        provider: 'local',
        customer_id: 'cus_sample',
        subscription_id: 'sub_sample',
        plan_id: plan.id,
        price_id: plan.priceId,
        product_id: plan.productId,
        status: 'active',
        current_period_end: periodEnd,
        cancel_at_period_end: false,
        b2b_until: null,
        created_at: at,
        updated_at: at,
      },
      invoice: {
        id: 'in_sample',
        subscriptionId: 'sub_sample',
        customerId: 'cus_sample',
        priceId: plan.priceId,
        amount: plan.amount,
        currency: plan.currency,
        periodEnd,
        url: 'https://example.com/invoices/in_sample',
        reason: 'subscription_cycle',
      },
    },
    at,
  )
}

/** The sample event of a webhook kind, marked `"test": true`; billing names a plan of `plans`. */
export function sampleWebhookPayload(kind: WebhookKind, plans: BillingDeps['plans']) {
  const at = new Date().toISOString()
  const payload = kind === 'billing' ? sampleBilling(plans, at) : sampleIdentification(at)
  return { ...payload, test: true }
}
