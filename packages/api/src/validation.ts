import { appError } from '@visitor-id/core'
import type { z } from 'zod'

/** Parses with a zod schema or throws `invalid_request` listing every failing field. */
export function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  throw appError('invalid_request', 'The request is invalid', {
    issues: result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
  })
}
