// Where a config's last scoring stands.
import { formatDateTime, formatNumber } from '../format.js'
import type { Recalculation } from '../types.js'

export function RecalculationStatus({ recalculation }: { recalculation: Recalculation | null }) {
  if (!recalculation) return <span class="muted">Not scored yet</span>
  const { status } = recalculation
  if (status === 'succeeded')
    return (
      <span>
        Scored {formatDateTime(recalculation.finishedAt)}: {formatNumber(recalculation.matches)} of{' '}
        {formatNumber(recalculation.visitors)} match
      </span>
    )
  if (status === 'failed') return <span class="error-text">Scoring failed: {recalculation.error}</span>
  return <span>Scoring {status}…</span>
}
