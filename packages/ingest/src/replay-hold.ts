// Holding a sink's replay off while a backup copies the spool: what both durable sinks share.

/**
 * `holdReplay` of a sink: stops new replay runs (a run checks `state.held`), waits for the one under
 * way, and returns the release, which resumes the replay (`resume`) once, however often called.
 */
export function replayHold(
  state: { held: number },
  run: { wake(): void; running(): Promise<void> | undefined; resume(): void },
): () => Promise<() => void> {
  return async () => {
    state.held += 1
    run.wake()
    await run.running()
    let released = false
    return () => {
      if (released) return
      released = true
      state.held -= 1
      run.resume()
    }
  }
}
