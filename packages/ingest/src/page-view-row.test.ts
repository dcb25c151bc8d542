import { blankPageViewRow } from '@visitor-id/testing/page-view-row'
import { describe, expect, it } from 'vitest'
import { pageViewColumns, toColumnValues } from './page-view-row.js'

describe('toColumnValues', () => {
  it('lists every column of a row, in pageViewColumns order', () => {
    const row = {
      ...blankPageViewRow('11111111-1111-1111-1111-111111111111', 'https://a.test/x'),
      asn: 15169,
    }
    row.tracking_params.gclid = 'g'
    const values = toColumnValues(row)
    expect(values).toHaveLength(pageViewColumns.length)
    expect(values).toEqual(pageViewColumns.map((column) => row[column]))
    expect(values[pageViewColumns.indexOf('asn')]).toBe(15169)
  })
})
