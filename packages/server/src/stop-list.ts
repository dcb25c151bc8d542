// Everything a process started, as one list: `stop()` and the cleanup after a failed start both
// run it, so a part cannot be stopped by one and forgotten by the other.

/**
 * The order parts stop in, by what they are: what takes requests first (no new work comes in),
 * then the workers, the ingest buffers (flushed to the store), the coordination (jobs under way
 * finish), the mailer those jobs send with, and the store with its data-directory lock last.
 */
const stages = ['requests', 'workers', 'ingest', 'coordination', 'mail', 'store'] as const
export type StopStage = (typeof stages)[number]

export interface StopList {
  /** Records a part that started; within a stage, the last added stops first. */
  add(stage: StopStage, stop: () => Promise<void> | void): void
  /**
   * Stops every part recorded, each once even when called again; a part that fails to stop does
   * not keep the others running: the first failure is thrown once all were tried.
   */
  stopAll(): Promise<void>
}

/** @example const started = createStopList(); started.add('workers', () => task.stop()) */
export function createStopList(): StopList {
  const parts: { stage: StopStage; stop: () => Promise<void> | void }[] = []
  let stopping: Promise<void> | undefined
  const stopAll = async () => {
    let failure: { error: unknown } | undefined
    for (const stage of stages) {
      const ofStage = parts.filter((part) => part.stage === stage).reverse()
      for (const part of ofStage) {
        try {
          await part.stop()
        } catch (error) {
          failure ??= { error }
        }
      }
    }
    if (failure) throw failure.error
  }
  return {
    add(stage, stop) {
      parts.push({ stage, stop })
    },
    stopAll() {
      stopping ??= stopAll()
      return stopping
    },
  }
}
