// Visitor and session ids. Storage may be blocked (privacy modes, hostile pages, sandboxed
// iframes): every access is guarded, and a per-page memory copy keeps ids stable regardless.
import { consentNoStorage } from '../wire.js'
import { denied } from './consent.js'
import { doc } from './guard.js'

const memory: Record<string, string> = {}

/** A random UUID v4 from getRandomValues, which unlike `crypto.randomUUID` also exists on plain-http pages. */
export const uuid = (): string =>
  'xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx'.replace(/x/g, () =>
    (crypto.getRandomValues(new Uint8Array(1))[0]! & 15).toString(16),
  )

/**
 * Reads, and with `value` also writes, one stored value: localStorage when `keep` (storage
 * consent), else page memory only.
 */
function store(key: string, value?: string): string | undefined {
  if (!(denied & consentNoStorage))
    try {
      if (value) localStorage.setItem(key, value)
      else value = localStorage.getItem(key) as string
    } catch {}
  memory[key] = value || memory[key]!
  return memory[key]
}

/**
 * The visitor id: first-party cookie, else localStorage, else a new one (then stored in both).
 * Without `keep` (no storage consent) the browser is neither read nor written: the id lives in
 * page memory, and a later grant stores it.
 */
export function visitorId(): string {
  let id: string | undefined
  if (!(denied & consentNoStorage))
    try {
      id = /\b_vid=([^;]+)/.exec(doc.cookie)![1]
    } catch {}
  id = id || store('_vid')
  if (!/^[0-9a-f-]{36}$/.test(id!)) id = uuid()
  if (!(denied & consentNoStorage))
    try {
      // Two years; SameSite=Lax is the browsers' default for a cookie without the attribute.
      doc.cookie = `_vid=${id};path=/;max-age=63072000`
    } catch {}
  return store('_vid', id)!
}

/** The session id, renewed after 30 minutes without a hit; every call counts as activity. Stored like the visitor id. */
export function sessionId(): string {
  const now = Date.now()
  const [id, last] = (store('_vid_s') || '').split('.')
  const current = id && now - +last! < 18e5 /* 30 minutes */ ? id : uuid()
  store('_vid_s', `${current}.${now}`)
  return current
}
