// The visitors chart: an SVG bar chart of our own (a few hundred bytes instead of a chart
// library), with a table of the same figures for screen readers.
import { formatNumber } from '../format.js'

export interface Point {
  timestamp: string
  count: number
}

const width = 720
const height = 220
const pad = { top: 12, right: 8, bottom: 28, left: 40 }

/** Round numbers for the axis: 0, then up to four steps of 1, 2 or 5 times a power of ten. */
function ticks(max: number): number[] {
  if (max <= 0) return [0, 1]
  const rough = max / 4
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? power * 10
  const result: number[] = []
  for (let value = 0; value <= max + step - 1e-9; value += step) result.push(value)
  return result
}

export function BarChart(props: { points: Point[]; label: string; formatX: (iso: string) => string }) {
  const { points } = props
  const axis = ticks(Math.max(0, ...points.map((p) => p.count)))
  const top = axis[axis.length - 1]!
  const plotW = width - pad.left - pad.right
  const plotH = height - pad.top - pad.bottom
  const slot = plotW / Math.max(points.length, 1)
  const barW = Math.max(1, slot * 0.7)
  const y = (value: number) => pad.top + plotH - (value / top) * plotH
  const labelEvery = Math.ceil(points.length / 10)
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={props.label}>
        {axis.map((value) => (
          <g key={value}>
            <line x1={pad.left} x2={width - pad.right} y1={y(value)} y2={y(value)} class="grid" />
            <text x={pad.left - 6} y={y(value) + 4} text-anchor="end" class="tick">
              {formatNumber(value)}
            </text>
          </g>
        ))}
        {points.map((point, index) => {
          const x = pad.left + index * slot + (slot - barW) / 2
          return (
            <g key={point.timestamp}>
              <rect
                x={x}
                y={y(point.count)}
                width={barW}
                height={Math.max(0, plotH + pad.top - y(point.count))}
                class="bar"
              >
                <title>
                  {props.formatX(point.timestamp)}: {formatNumber(point.count)}
                </title>
              </rect>
              {index % labelEvery === 0 ? (
                <text x={x + barW / 2} y={height - 8} text-anchor="middle" class="tick">
                  {props.formatX(point.timestamp)}
                </text>
              ) : null}
            </g>
          )
        })}
      </svg>
      {/* A wrapper hides it: tables ignore the overflow that hides an element. */}
      <div class="visually-hidden">
        <table>
          <caption>{props.label}</caption>
          <tbody>
            {points.map((point) => (
              <tr key={point.timestamp}>
                <th scope="row">{props.formatX(point.timestamp)}</th>
                <td>{point.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  )
}
