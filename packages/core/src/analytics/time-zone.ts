// Calendar days in an IANA time zone, for date-only bounds (`from=2026-03-29` in Europe/Paris is
// that day's midnight in Paris, whatever its offset that day).

const formatters = new Map<string, Intl.DateTimeFormat>()

/** True for a time zone name the runtime knows (IANA names and `UTC`). */
export function isTimeZone(name: string): boolean {
  try {
    formatterOf(name)
    return true
  } catch {
    return false
  }
}

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    if (formatters.size < 1000) formatters.set(timeZone, formatter)
  }
  return formatter
}

/** The zone's offset from UTC at an instant, in ms (positive east of Greenwich). */
function offsetAt(at: number, timeZone: string): number {
  const parts = Object.fromEntries(
    formatterOf(timeZone)
      .formatToParts(at)
      .map((part) => [part.type, part.value]),
  )
  const wallClock = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  )
  return wallClock - Math.floor(at / 1000) * 1000
}

/**
 * The instant a calendar day (YYYY-MM-DD) starts in the zone, plus `days` whole days (so `days: 1`
 * is when it ends): midnight, or the first moment of the day where midnight does not exist.
 * @example startOfDayIn('2026-03-29', 'Europe/Paris') // 2026-03-28T23:00:00.000Z
 */
export function startOfDayIn(date: string, timeZone: string, days = 0): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number]
  const wallClock = Date.UTC(year, month - 1, day + days)
  // Two passes: the offset at the first guess may differ from the offset at the answer.
  const guess = wallClock - offsetAt(wallClock, timeZone)
  return wallClock - offsetAt(guess, timeZone)
}
