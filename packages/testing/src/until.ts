/**
 * Polls `check` every 100 ms until it answers something other than undefined, and returns that;
 * throws after `limitMs`. For what a server does after it answered (deliveries, emails, jobs).
 * @example const delivery = await until(() => received.find((r) => r.eventId === eventId))
 */
export async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  limitMs = 15_000,
): Promise<T> {
  const started = Date.now()
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() - started > limitMs) throw new Error('not seen in time')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
