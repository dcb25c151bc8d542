// Visitor and session ids. Storage may be blocked (privacy modes, hostile pages, sandboxed
// iframes): every access is guarded, and a per-page memory copy keeps ids stable regardless.

const memory: Record<string, string> = {}

/** A random UUID v4 from getRandomValues, which unlike `crypto.randomUUID` also exists on plain-http pages. */
export function uuid(): string {
  return 'xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx'.replace(/x/g, () =>
    (crypto.getRandomValues(new Uint8Array(1))[0]! & 15).toString(16),
  )
}

/** Reads, and with `value` also writes, one stored value (localStorage, else page memory). */
function store(key: string, value?: string): string | undefined {
  try {
    if (value) localStorage.setItem(key, value)
    else value = localStorage.getItem(key) as string
  } catch {}
  memory[key] = value || memory[key]!
  return memory[key]
}

/** The visitor id: first-party cookie, else localStorage, else a new one (then stored in both). */
export function visitorId(): string {
  let id: string | undefined
  try {
    id = /\b_vid=([^;]+)/.exec(document.cookie)![1]
  } catch {}
  id = id || store('_vid')
  if (!/^[0-9a-f-]{36}$/.test(id!)) id = uuid()
  try {
    // Two years; SameSite=Lax is the browsers' default for a cookie without the attribute.
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing in Safari and Firefox.
    document.cookie = `_vid=${id};path=/;max-age=63072000`
  } catch {}
  return store('_vid', id)!
}

/** The session id, renewed after 30 minutes without a hit; every call counts as activity. */
export function sessionId(): string {
  const now = Date.now()
  const [id, last] = (store('_vid_s') || '').split('.')
  const current = id && now - +last! < 18e5 /* 30 minutes */ ? id : uuid()
  store('_vid_s', `${current}.${now}`)
  return current
}
