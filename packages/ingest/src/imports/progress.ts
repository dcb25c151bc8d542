// A one-line progress bar for imports, redrawn in place on a terminal (at most ten times a
// second) and silent otherwise, so logs and test output stay clean.

export interface ProgressBar {
  update(read: number, total: number, rows: number): void
  done(): void
}

/** @example const bar = createProgressBar(process.stderr); bar.update(50, 100, 1234); bar.done() */
export function createProgressBar(stream: NodeJS.WriteStream, label = 'importing'): ProgressBar {
  const width = 30
  let last = 0
  let drawn = false
  const draw = (read: number, total: number, rows: number) => {
    const ratio = total > 0 ? Math.min(1, read / total) : 1
    const filled = Math.round(ratio * width)
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`
    stream.write(
      `\r${label} [${bar}] ${String(Math.round(ratio * 100)).padStart(3)}% ${rows.toLocaleString('en')} rows`,
    )
    drawn = true
  }
  let latest: [number, number, number] = [0, 0, 0]
  return {
    update(read, total, rows) {
      latest = [read, total, rows]
      if (!stream.isTTY) return
      const now = Date.now()
      if (now - last < 100 && read < total) return
      last = now
      draw(read, total, rows)
    },
    done() {
      if (!stream.isTTY) return
      draw(...latest)
      if (drawn) stream.write('\n')
    },
  }
}
