// A search of a whole store for what names a person: what privacy tests check after an erasure.
import type { Store } from '@visitor-id/core/store'

/**
 * Rows of each table of the store (views aside) in which any of `needles` appears, case aside, in
 * any column: every row is read as its TSV line (`formatRow`), aggregate states included, whose
 * bytes hold the strings they keep. Tables with none are left out.
 * @example expect(await tablesNaming(store, [email, visitorId])).toEqual({})
 */
export async function tablesNaming(
  store: Store,
  needles: readonly string[],
): Promise<Record<string, number>> {
  const tables = await store.query<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View' ORDER BY name`,
  )
  const found: Record<string, number> = {}
  for (const { name } of tables) {
    const [row] = await store.query<{ n: number }>(
      `SELECT count() AS n FROM ${name}
       WHERE multiSearchAnyCaseInsensitive(formatRow('TabSeparated', *), {needles:Array(String)})`,
      { needles: [...needles] },
    )
    if (Number(row?.n) > 0) found[name] = Number(row?.n)
  }
  return found
}
