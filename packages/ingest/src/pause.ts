/**
 * A sleep that `wake()` cuts short: a background loop waits between tries and still stops at once.
 * @example const { pause, wake } = createPause(); await pause(1000) // wake() ends it early
 */
export function createPause() {
  let wake: (() => void) | undefined
  return {
    pause: (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      }),
    wake: () => wake?.(),
  }
}
