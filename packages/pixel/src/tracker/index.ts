// The browser tracker, bundled by esbuild into one small IIFE (dist/p.js).
// It must never throw into the host page, and adds at most one global: the queue function `vid`.
import { wire } from '../wire.js'

interface TrackerGlobal {
  (...args: unknown[]): void
  q?: IArguments[] | unknown[][]
}

type Hit = Record<string, string | number>

const win = window as unknown as { vid?: TrackerGlobal }
const doc = document
const SESSION_IDLE_MS = 30 * 60 * 1000
const VISITOR_COOKIE = '_vid'
const SESSION_KEY = '_vid_s'

let trackingKey = ''
let endpoint = ''

function uuid(): string {
  if (typeof crypto !== 'undefined' && crypto.randomUUID) return crypto.randomUUID()
  return '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) =>
    (+c ^ ((Math.random() * 256) & (15 >> (+c / 4)))).toString(16),
  )
}

function readStorage(key: string): string | null {
  try {
    return localStorage.getItem(key)
  } catch {
    return null
  }
}

function writeStorage(key: string, value: string): void {
  try {
    localStorage.setItem(key, value)
  } catch {}
}

function visitorId(): string {
  const match = /(?:^|; )_vid=([^;]+)/.exec(doc.cookie || '')
  let id = match?.[1] || readStorage(VISITOR_COOKIE) || ''
  if (!/^[0-9a-f-]{36}$/.test(id)) id = uuid()
  try {
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is not in every browser we support.
    doc.cookie = `${VISITOR_COOKIE}=${id}; path=/; max-age=63072000; SameSite=Lax`
  } catch {}
  writeStorage(VISITOR_COOKIE, id)
  return id
}

function sessionId(): string {
  const now = Date.now()
  const [id, last] = (readStorage(SESSION_KEY) || '').split('.')
  const current = id && last && now - Number(last) < SESSION_IDLE_MS ? id : uuid()
  writeStorage(SESSION_KEY, `${current}.${now}`)
  return current
}

function send(event: string, extra: Hit): void {
  if (!trackingKey) return
  const hit: Hit = {
    [wire.trackingKey]: trackingKey,
    [wire.event]: event,
    [wire.visitorId]: visitorId(),
    [wire.sessionId]: sessionId(),
    [wire.url]: location.href,
    [wire.clientTime]: Date.now(),
    ...extra,
  }
  const body = JSON.stringify(hit)
  const url = `${endpoint}/collect`
  try {
    if (navigator.sendBeacon?.(url, body)) return
  } catch {}
  try {
    fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit' }).catch(() => {})
  } catch {}
}

function pageview(): void {
  send('pv', {
    [wire.referrer]: doc.referrer,
    [wire.title]: doc.title,
    [wire.screenWidth]: screen.width,
    [wire.screenHeight]: screen.height,
    [wire.language]: navigator.language,
    [wire.timezone]: Intl.DateTimeFormat().resolvedOptions().timeZone || '',
  })
}

function command(name: unknown, arg: unknown): void {
  if (name === 'init' && arg && typeof arg === 'object') {
    const options = arg as { key?: unknown; host?: unknown }
    trackingKey = String(options.key || '')
    endpoint = String(options.host || '').replace(/\/+$/, '')
    pageview()
  }
}

function guarded(...args: unknown[]): void {
  try {
    command(args[0], args[1])
  } catch {}
}

try {
  const queued = win.vid?.q || []
  win.vid = guarded
  for (const args of queued) guarded(...Array.prototype.slice.call(args))
} catch {}
