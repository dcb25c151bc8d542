// Requests as Stripe reads them: form-encoded bodies and queries, values strings as on the wire.

/**
 * A form body as Stripe reads it: `line_items[0][price]=p` is `{ line_items: [{ price: 'p' }] }`,
 * `expand[]=a` (or `expand[0]=a`) is `{ expand: ['a'] }`. Values stay strings, as on the wire.
 */
export function parseStripeForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const [head = '', ...rest] = key.split('[')
    const path = [head, ...rest.map((part) => part.replace(/]$/, ''))]
    if (path.some((part) => part === '__proto__' || part === 'constructor' || part === 'prototype')) continue
    let node: Record<string, unknown> | unknown[] = root
    path.forEach((part, index) => {
      const container = node as Record<string, unknown>
      const slot = part === '' && Array.isArray(node) ? String(node.length) : part
      if (index === path.length - 1) {
        container[slot] = value
        return
      }
      const next = path[index + 1]!
      container[slot] ??= next === '' || /^\d+$/.test(next) ? [] : {}
      node = container[slot] as Record<string, unknown> | unknown[]
    })
  }
  return root
}

/** A parameter's value when it is a non-empty string (Stripe reads an empty one as unset). */
export const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined

/** The string entries of a parameter that is a hash (`metadata[key]=value`). */
export const strings = (value: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(value && typeof value === 'object' ? value : {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  )

/** The request's `expand[]`: which ids to answer as the objects they name. */
export const expandOf = (params: Record<string, unknown>): string[] =>
  Array.isArray(params.expand) ? params.expand.filter((value) => typeof value === 'string') : []
