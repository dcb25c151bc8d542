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
/**
 * Consent the visitor has denied, as bits (absent or 0: everything granted, which is what a pixel
 * without consent configuration, or older than this key, means): `consentNoStorage` (Consent Mode's
 * `analytics_storage: 'denied'`: the pixel stored nothing) and `consentNoIdentification`
 * (`ad_user_data: 'denied'`: the hit must identify no one).
 */
export const kConsent = 'cn'
export const consentNoStorage = 1
export const consentNoIdentification = 2

// Before `wire`: esbuild inlines only the constants declared ahead of the first object.
/** Run-time config flag: honour Global Privacy Control and Do Not Track (send nothing, no cookie). */
export const kRespectPrivacy = 'p'
/** Run-time config flag: opt-in form capture (a submitted form's email identifies the visitor). */
export const kFormCapture = 'f'
/** The config's body; the tracker reads it by these names (a renamed flag fails to compile there). */
export type WireConfig = { [kRespectPrivacy]?: 1; [kFormCapture]?: 1 }

/** Path prefix of the config endpoint (`/c/<trackingKey>`). */
export const configPath = '/c/'

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
  consent: kConsent,
} as const

/** Event codes on the wire, and the event types they stand for. */
export const wireEvents = { pv: 'pageview', en: 'engagement', id: 'identify' } as const

export type WireEventCode = keyof typeof wireEvents

/**
 * The run-time pixel config that `GET /c/<trackingKey>` returns to the tracker: flags are 1 when
 * on, absent when off. An unknown key gets the same answer as a key with every flag off.
 */
export const wireConfig = { respectPrivacySignals: kRespectPrivacy, formCapture: kFormCapture } as const
