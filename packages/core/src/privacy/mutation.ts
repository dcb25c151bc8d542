// The engine's deletes and updates of stored rows (mutations), as erasure and retention run them.

import { bindQueryParams } from '../store/bind-params.js'
import type { Store } from '../store/client.js'
import { renderStatement } from '../store/render-ddl.js'

/**
 * `ALTER TABLE ... DELETE|UPDATE ...` (with the placeholders of render-ddl.ts: `{{local:t}}`,
 * `{{on_cluster}}`) rendered for the store's deployment, its values written into it, waiting until
 * every replica applied it. Values are bound here rather than sent as query parameters: a mutation
 * is kept and run later, on every replica of a cluster, by the engine, which has the statement only.
 */
export function mutationSql(
  store: Pick<Store, 'database' | 'cluster'>,
  statement: string,
  params: Record<string, unknown>,
) {
  const rendered = renderStatement(statement, { database: store.database, cluster: store.cluster })!
  return `${bindQueryParams(rendered, params)} SETTINGS mutations_sync = 2`
}

export async function mutate(
  store: Store,
  statement: string,
  params: Record<string, unknown>,
): Promise<void> {
  await store.command(mutationSql(store, statement, params))
}
