import type { PixelConfigRow } from '@visitor-id/core/visitor-tracking'
import { blankPageViewRow } from '@visitor-id/testing/page-view-row'
import { describe, expect, it } from 'vitest'
import type { Hit } from './collect-schema.js'
import { emptyEnrichment, pageViewColumns, toColumnValues, toPageViewRow } from './page-view-row.js'

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

describe('toPageViewRow', () => {
  it('writes every column once, the enrichment empty exactly as emptyEnrichment has it', () => {
    // The row is an object literal (fast to build): nothing but this test keeps it in step with
    // the constant and the column list.
    const hit = {
      k: 'pk_test',
      e: 'pv',
      v: '11111111-1111-4111-8111-111111111111',
      s: '22222222-2222-4222-8222-222222222222',
      u: 'https://a.test/x?y=1',
    } as Hit
    const config = { organization_id: '33333333-3333-4333-8333-333333333333' } as PixelConfigRow
    const row = toPageViewRow(hit, config, { ip: '', userAgent: 'ua', receivedAt: Date.now() })
    expect(Object.keys(row).sort()).toEqual([...pageViewColumns].sort())
    const enrichment = Object.fromEntries(
      Object.keys(emptyEnrichment).map((column) => [column, row[column as keyof typeof row]]),
    )
    expect(enrichment).toEqual(emptyEnrichment)
  })
})
