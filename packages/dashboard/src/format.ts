// Numbers, dates and date ranges, in the browser's locale and time zone.

/** The browser's IANA time zone, e.g. `Europe/Paris`. */
export const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

const numberFormat = new Intl.NumberFormat()
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
const thisYearFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
})
const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' })
const hourFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric' })

export const formatNumber = (value: number | undefined | null) =>
  value === undefined || value === null ? '–' : numberFormat.format(value)

/** A moment, without its year when it is this year's: `Nov 23, 7:13 PM`. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '–'
  const date = new Date(iso)
  return (date.getFullYear() === new Date().getFullYear() ? thisYearFormat : dateTimeFormat).format(date)
}

export const formatDay = (iso: string) => dayFormat.format(new Date(iso))
export const formatHour = (iso: string) => hourFormat.format(new Date(iso))

/** `2 h 5 min`, `42 s`. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`
  const minutes = Math.round(seconds / 60)
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/** Percentage change from `previous` to `current`, or undefined when there was nothing before. */
export function change(current: number, previous: number): number | undefined {
  if (previous === 0) return undefined
  return Math.round(((current - previous) / previous) * 100)
}

export type RangePreset = 'today' | '7d' | '30d' | '90d' | 'custom'

/** A range of whole local days; `from` and `to` are YYYY-MM-DD, both included. */
export interface DayRange {
  preset: RangePreset
  from: string
  to: string
}

const pad = (n: number) => String(n).padStart(2, '0')

/** A local date as YYYY-MM-DD. */
export const isoDay = (date: Date) =>
  `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`

const parseDay = (day: string) => {
  const [y, m, d] = day.split('-').map(Number)
  return new Date(y!, m! - 1, d!)
}

const addDays = (day: string, days: number) => {
  const date = parseDay(day)
  date.setDate(date.getDate() + days)
  return isoDay(date)
}

/** The range of a preset ending today: `presetRange('7d')` is the last 7 days, today included. */
export function presetRange(preset: Exclude<RangePreset, 'custom'>, today = new Date()): DayRange {
  const to = isoDay(today)
  const days = { today: 1, '7d': 7, '30d': 30, '90d': 90 }[preset]
  return { preset, from: addDays(to, 1 - days), to }
}

/** Days in a range, both ends included. */
export function rangeDays(range: DayRange): number {
  return Math.round((parseDay(range.to).getTime() - parseDay(range.from).getTime()) / 86_400_000) + 1
}

/** The same number of days just before the range. */
export function previousRange(range: DayRange): DayRange {
  const days = rangeDays(range)
  return { preset: 'custom', from: addDays(range.from, -days), to: addDays(range.from, -1) }
}

/** The range as instants: local midnight of `from` to the last millisecond of `to`. */
export function rangeInstants(range: DayRange): { from: string; to: string } {
  const end = parseDay(range.to)
  end.setDate(end.getDate() + 1)
  return { from: parseDay(range.from).toISOString(), to: new Date(end.getTime() - 1).toISOString() }
}

/** Chart buckets that keep a range readable: hours for a day, weeks past 120 days. */
export function chartInterval(range: DayRange): 'hour' | 'day' | 'week' {
  const days = rangeDays(range)
  return days <= 2 ? 'hour' : days > 120 ? 'week' : 'day'
}

/** A person's name from its parts, else the email, else a placeholder. */
export function personName(row: {
  firstName?: string | null
  lastName?: string | null
  email?: string | null
}) {
  const name = [row.firstName, row.lastName].filter(Boolean).join(' ')
  return name || row.email || 'Anonymous visitor'
}
