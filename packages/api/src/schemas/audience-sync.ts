// The outcome of an audience sync (core integrations/sync-outcome.ts), as the list
// (`lastAudienceSync`) and a flow run's action (`sync`) show it.
import { z } from 'zod'
import { timestamp } from './common.js'

const count = z.number().int().min(0)

export const audienceSyncSchema = z
  .object({
    status: z
      .enum(['running', 'paused', 'success', 'failed'])
      .describe('`paused`: the platform asked to wait; the sync resumes by itself at `resumesAt`'),
    flowId: z.string(),
    integrationType: z.string(),
    accountId: z.string(),
    audienceId: z.string(),
    syncId: z.string().describe('Stays the same when a paused or failed sync resumes'),
    sent: count.describe('Members the platform acknowledged as added'),
    removed: count.describe('Members that left the list, acknowledged as removed'),
    received: count.optional().describe('Members the platform took, when it says'),
    invalid: count.optional().describe('Members the platform refused as malformed, when it says'),
    matched: count.optional().describe('Members the platform matched to its users, when it says'),
    requests: z
      .array(
        z.object({
          id: z.string(),
          state: z.enum(['processing', 'succeeded', 'partial', 'failed']),
          matched: count.optional(),
          matchRate: z
            .object({ min: z.number().min(0).max(100), max: z.number().min(0).max(100) })
            .optional()
            .describe(
              'The share of the request\'s members matched, in percent, where the platform gives a range, not a count (Google: `{ "min": 20, "max": 30 }`)',
            ),
          detail: z.string().optional().describe("The platform's words on a partial or failed request"),
        }),
      )
      .describe("The platform's request ids (the last 20) and how it processed them"),
    error: z.string().nullable().describe("Why the sync stopped, in the platform's words"),
    resumesAt: timestamp.nullable(),
    startedAt: timestamp,
    finishedAt: timestamp.nullable(),
  })
  .describe('AudienceSync')
