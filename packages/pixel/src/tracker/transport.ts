// Transport: sendBeacon survives page unloads; fetch with keepalive is the fallback. Both send a
// string body, which browsers label text/plain: a CORS "simple" request, so no preflight, and no
// custom headers.
import { nav } from './guard.js'

/** Posts a body without ever throwing or rejecting into the host page. */
export function post(url: string, body: string): void {
  try {
    if (nav.sendBeacon(url, body)) return
  } catch {}
  // Cross-origin fetches carry no cookies by default ('same-origin' credentials).
  fetch(url, { method: 'POST', body, keepalive: true }).catch(() => {})
}
