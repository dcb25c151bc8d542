/**
 * The wire format between the pixel and ingest: short keys, defined once here. Ingest builds its
 * validation schema from these names.
 */
export const wire = {
  trackingKey: 'k',
  event: 'e',
  visitorId: 'v',
  sessionId: 's',
  url: 'u',
  referrer: 'r',
  title: 'ti',
  screenWidth: 'sw',
  screenHeight: 'sh',
  language: 'la',
  timezone: 'tz',
  clientTime: 'ts',
  engagedMs: 'd',
  maxScroll: 'sc',
  email: 'em',
} as const

/** Event codes on the wire, and the event types they stand for. */
export const wireEvents = { pv: 'pageview', en: 'engagement', id: 'identify' } as const

export type WireEventCode = keyof typeof wireEvents
