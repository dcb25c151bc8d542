// Engagement: time the page was visible and how far it was scrolled, reported when the page is
// hidden or left (and before an SPA navigation), so sessions get real durations.
import { doc, guard } from './guard.js'

/** Starts measuring; `report(engagedMs, maxScrollPercent)` runs on each flush with visible time. */
export function trackEngagement(report: (engagedMs: number, scroll: number) => void) {
  let visibleSince = doc.hidden ? 0 : Date.now()
  let engaged = 0
  let scroll = 0

  const measure = guard(() => {
    // Truncated to an integer here; ingest clamps it to 0..100.
    scroll = Math.max(scroll, (((scrollY + innerHeight) * 100) / doc.documentElement.scrollHeight) | 0)
  })

  /** Reports visible time since the last flush; `newPage` restarts scroll depth (SPA, pagehide). */
  const flush = guard((newPage?: unknown) => {
    const now = Date.now()
    if (visibleSince) engaged += now - visibleSince
    visibleSince = doc.hidden ? 0 : now
    measure()
    if (engaged) report(engaged, scroll)
    engaged = 0
    if (newPage) scroll = 0
    measure()
  })

  // Scroll events cannot be cancelled, so this listener never delays scrolling.
  addEventListener('scroll', measure)
  addEventListener('pagehide', flush)
  doc.addEventListener('visibilitychange', () => {
    if (visibleSince) flush()
    else visibleSince = Date.now()
  })
  measure()
  return flush
}
