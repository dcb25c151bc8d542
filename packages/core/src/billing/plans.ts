// Subscription plans (docs/decisions.md, "Billing"): from PLANS_FILE (a JSON array) or the built-in two, a
// standard plan and a B2B one. A plan is one provider price: with Stripe, `productId` and `priceId`
// are the ids of a Product and a recurring Price made in its dashboard.
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import type { ProductType } from '../accounts/rows.js'
import { money } from '../email/mail-templates.js'

const planSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, - and _, at most 64'),
    name: z.string().trim().min(1).max(100),
    description: z.string().max(500).default(''),
    productId: z.string().min(1).max(200),
    priceId: z.string().min(1).max(200),
    /** In the currency's minor unit (cents). */
    amount: z.number().int().min(0).max(100_000_000),
    currency: z.string().regex(/^[a-z]{3}$/, 'a lowercase ISO 4217 code'),
    interval: z.enum(['month', 'year']),
    /** Identification credits granted for each paid period. */
    credits: z.number().int().min(0).max(1_000_000_000),
    productType: z.enum(['standard', 'plus_employee']),
    features: z.array(z.string().min(1).max(200)).max(50).default([]),
  })
  .strict()

export type Plan = z.infer<typeof planSchema>

const plansSchema = z
  .array(planSchema)
  .min(1)
  .max(100)
  .superRefine((plans, context) => {
    for (const key of ['id', 'priceId'] as const) {
      const seen = new Set<string>()
      plans.forEach((plan, index) => {
        if (seen.has(plan[key]))
          context.addIssue({ code: 'custom', path: [index, key], message: `duplicate ${key}` })
        seen.add(plan[key])
      })
    }
  })

/** The built-in plans: the ids a Stripe account would use are set by PLANS_FILE instead. */
export const defaultPlans: readonly Plan[] = plansSchema.parse([
  {
    id: 'standard',
    name: 'Standard',
    description: 'Company identification, analytics, lists and webhooks.',
    productId: 'prod_standard',
    priceId: 'price_standard_monthly',
    amount: 4900,
    currency: 'usd',
    interval: 'month',
    credits: 1000,
    productType: 'standard',
    features: [
      'Company identification',
      'Visitor analytics',
      'ICP scoring',
      'Lists and audiences',
      'Partner webhooks',
    ],
  },
  {
    id: 'b2b',
    name: 'B2B',
    description: 'Everything in Standard, with person identification at scale and phone search.',
    productId: 'prod_b2b',
    priceId: 'price_b2b_monthly',
    amount: 19900,
    currency: 'usd',
    interval: 'month',
    credits: 10000,
    productType: 'plus_employee',
    features: [
      'Everything in Standard',
      '10,000 identification credits a month',
      'Phone number search',
      'Automatic phone enrichment',
    ],
  },
])

/** The plans of PLANS_FILE, or the built-in ones; a bad file is a start-up error naming the field. */
export function loadPlans(file: string | undefined): readonly Plan[] {
  if (!file) return defaultPlans
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new Error(`PLANS_FILE ${file}: not readable JSON (${(error as Error).message})`)
  }
  const parsed = plansSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new Error(`PLANS_FILE ${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return parsed.data
}

/** The plan of a price, if any. */
export const planByPrice = (plans: readonly Plan[], priceId: string): Plan | undefined =>
  plans.find((plan) => plan.priceId === priceId)

export const isB2bPlan = (plan: Plan | undefined): boolean =>
  plan?.productType === ('plus_employee' satisfies ProductType)

/** The plan's price for people: '$199.00 / month' (the currency's own decimals). */
export const planPriceLabel = (plan: Plan): string =>
  `${money({ minor: plan.amount, currency: plan.currency })} / ${plan.interval}`
