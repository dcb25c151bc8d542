import { describe, expect, it } from 'vitest'
import { isTimeZone, startOfDayIn } from './time-zone.js'

describe('startOfDayIn', () => {
  it.each([
    ['2026-07-01', 'UTC', 0, '2026-07-01T00:00:00.000Z'],
    ['2026-07-01', 'Europe/Paris', 0, '2026-06-30T22:00:00.000Z'],
    ['2026-12-01', 'Europe/Paris', 0, '2026-11-30T23:00:00.000Z'],
    // The day summer time starts (23 hours) and the day it ends (25 hours).
    ['2026-03-29', 'Europe/Paris', 1, '2026-03-29T22:00:00.000Z'],
    ['2026-10-25', 'Europe/Paris', 0, '2026-10-24T22:00:00.000Z'],
    ['2026-10-25', 'Europe/Paris', 1, '2026-10-25T23:00:00.000Z'],
    ['2026-07-01', 'America/New_York', 0, '2026-07-01T04:00:00.000Z'],
    ['2026-07-01', 'Asia/Kolkata', 0, '2026-06-30T18:30:00.000Z'],
    ['2026-12-31', 'Pacific/Kiritimati', 1, '2026-12-31T10:00:00.000Z'],
  ])('%s in %s (+%i days)', (date, zone, days, expected) => {
    expect(new Date(startOfDayIn(date, zone, days)).toISOString()).toBe(expected)
  })

  it('knows zone names', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true)
    expect(isTimeZone('UTC')).toBe(true)
    expect(isTimeZone('Mars/Olympus')).toBe(false)
    expect(isTimeZone('')).toBe(false)
  })
})
