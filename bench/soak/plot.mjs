// The soak's plot as a PNG, drawn here: RSS over time (with the cap and the warm-up's end) above
// the throughputs over time. No chart library: lines and a 5x7 pixel font on an RGB buffer, encoded
// with node:zlib (deflate and CRC-32), so the benchmark needs nothing installed.
import { writeFileSync } from 'node:fs'
import { crc32, deflateSync } from 'node:zlib'

// 5x7 glyphs, one number per row, the high bit the leftmost pixel.
const font = {
  0: [14, 17, 19, 21, 25, 17, 14],
  1: [4, 12, 4, 4, 4, 4, 14],
  2: [14, 17, 1, 2, 4, 8, 31],
  3: [31, 2, 4, 2, 1, 17, 14],
  4: [2, 6, 10, 18, 31, 2, 2],
  5: [31, 16, 30, 1, 1, 17, 14],
  6: [6, 8, 16, 30, 17, 17, 14],
  7: [31, 1, 2, 4, 8, 8, 8],
  8: [14, 17, 17, 14, 17, 17, 14],
  9: [14, 17, 17, 15, 1, 2, 12],
  A: [14, 17, 17, 31, 17, 17, 17],
  B: [30, 17, 17, 30, 17, 17, 30],
  C: [14, 17, 16, 16, 16, 17, 14],
  D: [28, 18, 17, 17, 17, 18, 28],
  E: [31, 16, 16, 30, 16, 16, 31],
  F: [31, 16, 16, 30, 16, 16, 16],
  G: [14, 17, 16, 23, 17, 17, 15],
  H: [17, 17, 17, 31, 17, 17, 17],
  I: [14, 4, 4, 4, 4, 4, 14],
  K: [17, 18, 20, 24, 20, 18, 17],
  L: [16, 16, 16, 16, 16, 16, 31],
  M: [17, 27, 21, 21, 17, 17, 17],
  N: [17, 17, 25, 21, 19, 17, 17],
  O: [14, 17, 17, 17, 17, 17, 14],
  P: [30, 17, 17, 30, 16, 16, 16],
  Q: [14, 17, 17, 17, 21, 18, 13],
  R: [30, 17, 17, 30, 20, 18, 17],
  S: [15, 16, 16, 14, 1, 1, 30],
  T: [31, 4, 4, 4, 4, 4, 4],
  U: [17, 17, 17, 17, 17, 17, 14],
  V: [17, 17, 17, 17, 17, 10, 4],
  W: [17, 17, 17, 21, 21, 21, 10],
  X: [17, 17, 10, 4, 10, 17, 17],
  Y: [17, 17, 10, 4, 4, 4, 4],
  '.': [0, 0, 0, 0, 0, 12, 12],
  '/': [1, 1, 2, 4, 8, 16, 16],
  '-': [0, 0, 0, 31, 0, 0, 0],
  '(': [2, 4, 8, 8, 8, 4, 2],
  ')': [8, 4, 2, 2, 2, 4, 8],
  ':': [0, 12, 12, 0, 12, 12, 0],
  '%': [24, 25, 2, 4, 8, 19, 3],
  ',': [0, 0, 0, 0, 12, 4, 8],
}

function canvas(width, height) {
  const pixels = Buffer.alloc(width * height * 3, 255)
  const set = (x, y, [r, g, b]) => {
    x = Math.round(x)
    y = Math.round(y)
    if (x < 0 || y < 0 || x >= width || y >= height) return
    const i = (y * width + x) * 3
    pixels[i] = r
    pixels[i + 1] = g
    pixels[i + 2] = b
  }
  const line = (x0, y0, x1, y1, color, thick = 1) => {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))))
    for (let s = 0; s <= steps; s++) {
      const x = x0 + ((x1 - x0) * s) / steps
      const y = y0 + ((y1 - y0) * s) / steps
      for (let d = 0; d < thick; d++) set(x, y + d, color)
    }
  }
  const text = (x, y, value, color = [40, 40, 40], scale = 2) => {
    let cx = x
    for (const char of String(value).toUpperCase()) {
      const rows = font[char]
      if (rows)
        rows.forEach((bits, row) => {
          for (let col = 0; col < 5; col++)
            if (bits & (16 >> col))
              for (let dx = 0; dx < scale; dx++)
                for (let dy = 0; dy < scale; dy++) set(cx + col * scale + dx, y + row * scale + dy, color)
        })
      cx += 6 * scale
    }
  }
  return { width, height, pixels, set, line, text }
}

function encodePng({ width, height, pixels }) {
  const rows = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++)
    pixels.copy(rows, y * (width * 3 + 1) + 1, y * width * 3, (y + 1) * width * 3)
  const chunk = (type, data) => {
    const head = Buffer.alloc(8)
    head.writeUInt32BE(data.length, 0)
    head.write(type, 4, 'ascii')
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
    return Buffer.concat([head, data, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8-bit RGB, no interlace
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

const niceStep = (max, ticks) => {
  const raw = max / ticks
  const power = 10 ** Math.floor(Math.log10(raw))
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw)
}

/** One panel: axes, grid, tick labels and the series as lines; `marks` are horizontal lines (a cap). */
function panel(c, box, { title, maxX, series, marks = [], vertical = [] }) {
  const maxY =
    Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1])), ...marks.map((m) => m.y)) * 1.1
  const x = (v) => box.x + (v / maxX) * box.w
  const y = (v) => box.y + box.h - (v / maxY) * box.h
  const grey = [215, 215, 215]
  const stepY = niceStep(maxY, 5)
  for (let v = 0; v <= maxY; v += stepY) {
    c.line(box.x, y(v), box.x + box.w, y(v), grey)
    c.text(box.x - 8 - 12 * String(v).length, y(v) - 7, v)
  }
  const stepX = niceStep(maxX, 10)
  for (let v = 0; v <= maxX; v += stepX) {
    c.line(x(v), box.y, x(v), box.y + box.h, grey)
    c.text(x(v) - 6 * String(v).length, box.y + box.h + 8, v)
  }
  c.line(box.x, box.y + box.h, box.x + box.w, box.y + box.h, [0, 0, 0])
  c.line(box.x, box.y, box.x, box.y + box.h, [0, 0, 0])
  for (const v of vertical)
    for (let yy = box.y; yy < box.y + box.h; yy += 6) c.line(x(v), yy, x(v), yy + 3, [120, 120, 120])
  for (const mark of marks) {
    for (let xx = box.x; xx < box.x + box.w; xx += 10) c.line(xx, y(mark.y), xx + 6, y(mark.y), mark.color, 2)
    c.text(box.x + 10, y(mark.y) - 20, mark.label, mark.color)
  }
  c.text(box.x, box.y - 26, title)
  let legendX = box.x + box.w - 12 * series.reduce((n, s) => n + s.label.length + 3, 0)
  for (const s of series) {
    for (let i = 1; i < s.points.length; i++)
      c.line(x(s.points[i - 1][0]), y(s.points[i - 1][1]), x(s.points[i][0]), y(s.points[i][1]), s.color, 2)
    c.line(legendX, box.y - 18, legendX + 20, box.y - 18, s.color, 3)
    c.text(legendX + 26, box.y - 25, s.label, s.color)
    legendX += 12 * (s.label.length + 3)
  }
}

/**
 * Writes the plot: `samples` are { minute, rssMiB, ingest, reads, webhooks } (rates per second);
 * `capMiB` the RSS cap drawn as a line, `warmupMinutes` the warm-up's end as a dashed line.
 */
export function writePlot(file, { samples, capMiB, warmupMinutes, title }) {
  const c = canvas(1400, 1200)
  const maxX = Math.max(1, ...samples.map((s) => s.minute))
  c.text(110, 14, title, [0, 0, 0], 2)
  const box = (row) => ({ x: 110, y: 80 + row * 370, w: 1250, h: 270 })
  panel(c, box(0), {
    title: 'RSS (MIB) OVER MINUTES',
    maxX,
    series: [{ label: 'RSS', color: [200, 40, 40], points: samples.map((s) => [s.minute, s.rssMiB]) }],
    marks: [{ y: capMiB, label: `CAP ${capMiB} MIB`, color: [90, 90, 200] }],
    vertical: [warmupMinutes],
  })
  panel(c, box(1), {
    title: 'HITS ACKNOWLEDGED PER S (INGEST AND IDENTIFY)',
    maxX,
    series: [{ label: 'HITS', color: [30, 120, 200], points: samples.map((s) => [s.minute, s.ingest]) }],
    vertical: [warmupMinutes],
  })
  panel(c, box(2), {
    title: 'API READS AND WEBHOOK DELIVERIES PER S',
    maxX,
    series: [
      { label: 'API READS', color: [40, 160, 60], points: samples.map((s) => [s.minute, s.reads]) },
      { label: 'WEBHOOKS', color: [220, 130, 20], points: samples.map((s) => [s.minute, s.webhooks]) },
    ],
    vertical: [warmupMinutes],
  })
  c.text(640, 1170, 'MINUTES', [0, 0, 0])
  writeFileSync(file, encodePng(c))
}
