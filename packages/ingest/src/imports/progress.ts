// A one-line progress bar for imports, redrawn in place on a terminal (at most ten times a
// second) and silent otherwise, so logs and test output stay clean. It counts rows read and rows
// imported apart: a file of 5 rows with 2 rejected ends on "5 rows read, 3 imported, 2 rejected".
import type { ImportProgress } from './report.js'

export interface ProgressBar {
  update(progress: ImportProgress): void
  /** Draws the last state (the final counts) and ends the line. */
  done(): void
}

/** The bar's text: `label [####------]  63% 5 rows read, 3 imported, 2 rejected`. */
export function progressLine(label: string, progress: ImportProgress, width = 30): string {
  const { bytesRead, totalBytes } = progress
  const ratio = totalBytes > 0 ? Math.min(1, bytesRead / totalBytes) : 1
  const filled = Math.round(ratio * width)
  const count = (n: number) => n.toLocaleString('en')
  return (
    `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ` +
    `${count(progress.rowsRead)} ${progress.rowsRead === 1 ? 'row' : 'rows'} read, ` +
    `${count(progress.accepted)} imported, ${count(progress.rejected)} rejected`
  )
}

/**
 * @example const bar = createProgressBar(process.stderr, 'import companies'); await importCompanies({ store, file, onProgress: bar.update }); bar.done()
 */
export function createProgressBar(stream: NodeJS.WriteStream, label = 'importing'): ProgressBar {
  let last = 0
  let drawn = false
  let latest: ImportProgress = { bytesRead: 0, totalBytes: 0, rowsRead: 0, accepted: 0, rejected: 0 }
  const draw = () => {
    // \x1b[K clears what a longer previous line left behind.
    stream.write(`\r${progressLine(label, latest)}\x1b[K`)
    drawn = true
  }
  return {
    update(progress) {
      latest = progress
      if (!stream.isTTY) return
      const now = Date.now()
      if (now - last < 100) return
      last = now
      draw()
    },
    done() {
      if (!stream.isTTY) return
      draw()
      if (drawn) stream.write('\n')
    },
  }
}
