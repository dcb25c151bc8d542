import { appError } from '@visitor-id/core/errors'
import type { z } from 'zod'

export interface Issue {
  path: string
  message: string
}

const issuesOf = (error: z.ZodError): Issue[] =>
  error.issues.slice(0, 20).map((issue) => ({ path: issue.path.join('.'), message: issue.message }))

/** Parses with a zod schema or throws `invalid_request` listing every failing field. */
export function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  throw appError('invalid_request', 'The request is invalid', { issues: issuesOf(result.error) })
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined

/**
 * Parses a request's params, query and body at once, so one 400 lists every failing field.
 * Parts without a schema come out as undefined.
 */
export function parseRequest<
  P extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
>(
  schemas: { params?: P; query?: Q; body?: B },
  input: { params: unknown; query: unknown; body: unknown },
): { params: Parsed<P>; query: Parsed<Q>; body: Parsed<B> } {
  const issues: Issue[] = []
  const run = (schema: z.ZodType | undefined, value: unknown): unknown => {
    if (!schema) return undefined
    const result = schema.safeParse(value)
    if (result.success) return result.data
    issues.push(...issuesOf(result.error))
    return undefined
  }
  const params = run(schemas.params, input.params)
  const query = run(schemas.query, input.query)
  const body = run(schemas.body, input.body)
  if (issues.length > 0) throw appError('invalid_request', 'The request is invalid', { issues })
  return { params, query, body } as { params: Parsed<P>; query: Parsed<Q>; body: Parsed<B> }
}
