// The date range of a page: today, 7, 30 or 90 days, or custom days; in the browser's time zone.
import { type DayRange, isoDay, presetRange, type RangePreset, timeZone } from '../format.js'

const presets: { value: RangePreset; label: string }[] = [
  { value: 'today', label: 'Today' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
  { value: 'custom', label: 'Custom' },
]

export function RangePicker({ range, onChange }: { range: DayRange; onChange: (range: DayRange) => void }) {
  const today = isoDay(new Date())
  const pick = (preset: RangePreset) =>
    onChange(preset === 'custom' ? { ...range, preset } : presetRange(preset))
  const setDay = (end: 'from' | 'to', value: string) => {
    if (!value) return
    const next = { ...range, preset: 'custom' as const, [end]: value }
    if (next.from > next.to) next[end === 'from' ? 'to' : 'from'] = value
    onChange(next)
  }
  return (
    <fieldset class="range">
      <legend class="visually-hidden">Date range</legend>
      <label for="range-preset">Range</label>
      <select
        id="range-preset"
        value={range.preset}
        onChange={(event) => pick((event.target as HTMLSelectElement).value as RangePreset)}
      >
        {presets.map((preset) => (
          <option key={preset.value} value={preset.value}>
            {preset.label}
          </option>
        ))}
      </select>
      {range.preset === 'custom' ? (
        <>
          <label for="range-from">From</label>
          <input
            id="range-from"
            type="date"
            value={range.from}
            max={today}
            onChange={(event) => setDay('from', (event.target as HTMLInputElement).value)}
          />
          <label for="range-to">To</label>
          <input
            id="range-to"
            type="date"
            value={range.to}
            max={today}
            onChange={(event) => setDay('to', (event.target as HTMLInputElement).value)}
          />
        </>
      ) : null}
      <span class="hint">Time zone: {timeZone}</span>
    </fieldset>
  )
}
