// The browser tracker, bundled by esbuild into one small IIFE (dist/p.js). Its one global is the
// command queue `vid`; every entry point is guarded so nothing we do throws into the host page.
import './flags.js'
import {
  configPath,
  consentNoIdentification,
  kClientTime,
  kConsent,
  kEmail,
  kEngagedMs,
  kEvent,
  kLanguage,
  kMaxScroll,
  kReferrer,
  kScreenHeight,
  kScreenWidth,
  kSessionId,
  kTimezone,
  kTitle,
  kTrackingKey,
  kUrl,
  kVisitorId,
  kWebdriver,
  type WireConfig,
} from '../wire.js'
import { consent, denied } from './consent.js'
import { trackEngagement } from './engagement.js'
import { captureForms } from './forms.js'
import { doc, guard, nav } from './guard.js'
import { onNavigate } from './history.js'
import { sessionId, visitorId } from './storage.js'
import { post } from './transport.js'

type Hit = Record<string, unknown>

interface Api {
  (...args: unknown[]): void
  /** Calls queued by the snippet's stub before this script loaded. */
  q?: ArrayLike<unknown>[]
  /** Set once the real tracker is installed, so a second copy of the script stays idle. */
  l?: 1
}

const win = window as unknown as { vid?: Api }

let key = ''
let host = ''
/** 0: not yet (no init, or waiting for the config because a privacy signal is on); 1: on; 2: off. */
let state = 0
let waiting: [string, Hit][] = []
let lastPath = ''
let lastUrl = ''
let flushEngagement: ((newPage?: boolean) => void) | undefined

function send(event: string, extra: Hit): void {
  if (state - 1) {
    if (!state) waiting.push([event, extra])
    return
  }
  const hit = {
    [kTrackingKey]: key,
    [kEvent]: event,
    // Read each time: a late storage grant stores the page's ids from the next hit on.
    [kVisitorId]: visitorId(),
    [kSessionId]: sessionId(),
    [kUrl]: location.href,
    [kClientTime]: Date.now(),
    [kWebdriver]: nav.webdriver,
    // Undefined (JSON leaves it out) until the site configures consent: absent means granted.
    [kConsent]: denied,
  }
  post(`${host}/collect`, JSON.stringify(Object.assign(hit, extra)))
}

function start(on: unknown): void {
  state = 2 - +!!on
  for (const [event, extra] of waiting) send(event, extra)
  waiting = []
}

function pageview(): void {
  // Time on the page being left (unset before the first page view).
  if (FEATURE_ENGAGEMENT && flushEngagement) flushEngagement(true)
  lastPath = location.pathname
  send('pv', {
    [kReferrer]: lastUrl || doc.referrer,
    [kTitle]: doc.title,
    [kScreenWidth]: screen.width,
    [kScreenHeight]: screen.height,
    [kLanguage]: nav.language,
    [kTimezone]: Intl.DateTimeFormat().resolvedOptions().timeZone,
  })
  lastUrl = location.href
}

function identify(traits?: Hit): void {
  // Ingest validates the address; here only a cheap sanity check. Without identification consent
  // the call is dropped, not kept for a later grant.
  if (!(denied & consentNoIdentification) && /.@./.test(traits!.email as string))
    send('id', { [kEmail]: traits!.email })
}

function init(options?: Hit): void {
  if (key) return
  key = options!.key as string
  if (!key) return
  // The defaults, e.g. both denied until the site's consent banner grants them; absent: everything
  // granted, as before consent existed.
  consent((options!.consent as Hit) || {})
  // The snippet passes the host without a trailing slash.
  host = (options!.host as string) || ''
  // biome-ignore lint/suspicious/noDoubleEquals: doNotTrack is "1" in most browsers, 1 in some.
  const signal = nav.globalPrivacyControl || nav.doNotTrack == (1 as unknown as string)
  if (!signal) start(1)
  pageview()
  if (FEATURE_SPA) onNavigate(() => location.pathname !== lastPath && pageview())
  if (FEATURE_ENGAGEMENT) {
    flushEngagement = trackEngagement((engagedMs, scroll) =>
      send('en', { [kEngagedMs]: engagedMs, [kMaxScroll]: scroll, [kUrl]: lastUrl }),
    )
  }
  // The run-time config (privacy, form capture) comes from a small cacheable endpoint, so /p.js
  // stays the same file for every site. Without a privacy signal nothing waits for it; with one,
  // nothing is sent (and no cookie set) unless the config says the site does not honour it. Asked
  // last: a fetch that throws (a hostile page) then costs nothing else, and under a signal the hits
  // keep waiting, unsent.
  if (FEATURE_FORMS || signal)
    fetch(host + configPath + key)
      .then((r) => r.json())
      .then(
        (c: WireConfig) => {
          if (signal) start(!c.p)
          if (FEATURE_FORMS && c.f) captureForms((email) => identify({ email }))
        },
        () => start(!signal),
      )
}

const commands: Record<string, (arg?: Hit) => void> = { init, identify, pageview, consent }

const api: Api = guard((name, arg) => commands[name as string]!(arg as Hit))
api.l = 1

guard(() => {
  const stub = win.vid
  // Plain && rather than ?.: es2017 output would spell ?. out at greater length.
  // biome-ignore lint/complexity/useOptionalChain: see above
  if (stub && stub.l) return
  // Replay first: if the page made `vid` read-only, the queued calls still run.
  // biome-ignore lint/complexity/useOptionalChain: see above
  for (const args of (stub && stub.q) || []) api(args[0], args[1])
  win.vid = api
})()
