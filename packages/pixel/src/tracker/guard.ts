// Every entry point into our code (queue calls, event listeners, timers, wrappers) goes through
// `guard`, so an error of ours never reaches the host page or its window.onerror.

/** Wraps a function so that it never throws; it returns undefined instead. */
export const guard =
  <A extends unknown[]>(fn: (...args: A) => unknown) =>
  (...args: A): void => {
    try {
      fn(...args)
    } catch {}
  }

// One alias of each host global for every module: fewer bytes than each module's own.
export const doc = document
export const nav = navigator as Navigator & { globalPrivacyControl?: boolean }
