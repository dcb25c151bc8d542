// Shapes of the ICP config sections (organization-level and partner-level).
import { filterSchema } from '@visitor-id/core/filters'
import { rulesIssues, slugMaxLength, slugPattern } from '@visitor-id/core/icp'
import { z } from 'zod'
import { organizationIdParam, timestamp } from './common.js'

export const slugSchema = z
  .string()
  .min(1)
  .max(slugMaxLength)
  .regex(slugPattern, 'must be lowercase letters and digits in dash-separated words, such as enterprise-us')

export const slugParams = z.object({
  organizationId: organizationIdParam,
  slug: z.string().min(1).max(slugMaxLength).describe('ICP config slug'),
})

export const recalculationSchema = z
  .object({
    status: z.enum(['queued', 'running', 'succeeded', 'failed']),
    requestedAt: timestamp,
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    visitors: z.number().int().nullable().describe('Visitors scored by the last finished run'),
    matches: z.number().int().nullable().describe('Of those, visitors matched'),
    durationMs: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .describe('The last recalculation of the config (null before the first)')

const priority = z.number().int().min(-1_000_000).max(1_000_000).describe('Lower value means higher priority')
const name = z.string().trim().min(1).max(200)

/** Rules, checked by the ICP engine: every problem is reported at its JSON path under `rules`. */
export const rulesInput = z
  .unknown()
  .superRefine((value, context) => {
    for (const issue of rulesIssues(value)) {
      context.addIssue({ code: 'custom', message: issue.message, path: [...issue.segments] })
    }
  })
  .describe('rules.groups[]: {operator: AND | OR, conditions: [{type, comparator, value, optional}]}')

export const organizationIcpConfigSchema = z.object({
  slug: z.string(),
  name: z.string(),
  filter: filterSchema,
  isActive: z.boolean(),
  priority: z.number().int(),
  createdAt: timestamp,
  updatedAt: timestamp,
  recalculation: recalculationSchema.nullable(),
})

export const organizationIcpConfigCreate = z.strictObject({
  slug: slugSchema.optional().describe('Path identifier; derived from the name when absent'),
  name: name.describe('Display name'),
  filter: filterSchema.describe('Company-side keys decide the match, contact-side keys the persona match'),
  isActive: z.boolean().optional().describe('Default true'),
  priority: priority.optional(),
})

export const organizationIcpConfigUpdate = organizationIcpConfigCreate
  .partial()
  .refine((body) => Object.keys(body).length > 0, { message: 'Give at least one field to update' })

export const partnerIcpConfigSchema = z.object({
  id: z.string(),
  slug: z.string(),
  label: z.string(),
  rules: z.record(z.string(), z.unknown()),
  priority: z.number().int(),
  isActive: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
  recalculation: recalculationSchema.nullable(),
})

export const partnerIcpConfigCreate = z.strictObject({
  label: name.describe('Display label; the slug is derived from it'),
  rules: rulesInput,
  priority: priority.optional(),
  isActive: z.boolean().optional().describe('Default true'),
})

export const partnerIcpConfigUpdate = z
  .strictObject({
    label: name.optional(),
    rules: rulesInput.optional(),
    priority: priority.optional(),
    isActive: z.boolean().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'Give at least one field to update' })
