// SPA navigations: wrap pushState / replaceState and listen to popstate. The wrappers are defined
// on the history object itself (Object.defineProperty), which works even when the page froze
// History.prototype; if history itself is frozen, a slow poll takes over.
import { guard } from './guard.js'

/** Calls `changed` after every client-side navigation (the caller decides if the path moved). */
export function onNavigate(changed: () => void): void {
  const notify = guard(changed)
  for (const name of ['pushState', 'replaceState'] as const) {
    const original = history[name]
    try {
      Object.defineProperty(history, name, {
        configurable: true,
        writable: true,
        value(this: History, ...args: Parameters<History['pushState']>): void {
          // The host's own errors from the real call propagate unchanged; ours never do. Both
          // methods return undefined.
          original.apply(this, args)
          notify()
        },
      })
    } catch {
      setInterval(notify, 1000)
    }
  }
  addEventListener('popstate', notify)
}
