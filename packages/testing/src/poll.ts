/**
 * Polls `check` every 5 ms until it holds and resolves with the milliseconds that took; fails once
 * `limitMs` have passed (for tests of "seen within a second").
 */
export async function timeUntil(check: () => Promise<boolean>, limitMs: number): Promise<number> {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > limitMs) throw new Error(`not seen within ${limitMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return Date.now() - started
}
