/**
 * The wire format between the pixel and ingest: short keys, defined once here. Ingest builds its
 * validation schema from `wire`; the tracker imports the single constants, which esbuild inlines
 * (an object's properties would not be), so the bundle carries only the short strings.
 */
export const kTrackingKey = 'k'
export const kEvent = 'e'
export const kVisitorId = 'v'
export const kSessionId = 's'
export const kUrl = 'u'
export const kReferrer = 'r'
export const kTitle = 'ti'
export const kScreenWidth = 'sw'
export const kScreenHeight = 'sh'
export const kLanguage = 'la'
export const kTimezone = 'tz'
export const kClientTime = 'ts'
export const kEngagedMs = 'd'
export const kMaxScroll = 'sc'
export const kEmail = 'em'
/** 1 when the browser says it is driven by automation (`navigator.webdriver`). */
export const kWebdriver = 'wd'

/** Every hit key by name (what ingest validates). */
export const wire = {
  trackingKey: kTrackingKey,
  event: kEvent,
  visitorId: kVisitorId,
  sessionId: kSessionId,
  url: kUrl,
  referrer: kReferrer,
  title: kTitle,
  screenWidth: kScreenWidth,
  screenHeight: kScreenHeight,
  language: kLanguage,
  timezone: kTimezone,
  clientTime: kClientTime,
  engagedMs: kEngagedMs,
  maxScroll: kMaxScroll,
  email: kEmail,
  webdriver: kWebdriver,
} as const

/** Event codes on the wire, and the event types they stand for. */
export const wireEvents = { pv: 'pageview', en: 'engagement', id: 'identify' } as const

export type WireEventCode = keyof typeof wireEvents

/** Run-time config flag: honour Global Privacy Control and Do Not Track (send nothing, no cookie). */
export const kRespectPrivacy = 'p'
/** Run-time config flag: opt-in form capture (a submitted form's email identifies the visitor). */
export const kFormCapture = 'f'

/**
 * The run-time pixel config that `GET /c/<trackingKey>` returns to the tracker: flags are 1 when
 * on, absent when off. An unknown key gets the same answer as a key with every flag off.
 */
export const wireConfig = { respectPrivacySignals: kRespectPrivacy, formCapture: kFormCapture } as const

/** Path prefix of the config endpoint (`/c/<trackingKey>`). */
export const configPath = '/c/'
