/** One series of a chart: its name (in the legend and each bar's tooltip) and its CSS class (the colour). */
export interface BarSeries {
  readonly name: string
  readonly className: string
}

export interface BarChartProps {
  /** The chart's name, e.g. "Validations per day". */
  readonly title: string
  readonly series: readonly BarSeries[]
  /** One entry per day: the date (`YYYY-MM-DD`) and a value per series, stacked bottom-up. */
  readonly days: readonly { readonly date: string; readonly values: readonly number[] }[]
}

const width = 400
const height = 180
const left = 40
const bottom = 24
const top = 10

/**
 * Stacked bars per day, drawn as SVG: geometry in attributes and colours from the stylesheet's
 * classes, so the dashboard's CSP (no inline style) has nothing to refuse. A screen reader reads the
 * chart's title (its name, period and totals); the numbers of each day are in a table beside it.
 */
export function BarChart({ title, series, days }: BarChartProps) {
  const totals = days.map((day) => day.values.reduce((sum, value) => sum + value, 0))
  const max = Math.max(1, ...totals)
  const scale = (height - top - bottom) / niceCeiling(max)
  const step = (width - left) / Math.max(1, days.length)
  const barWidth = Math.max(1, step * 0.7)
  const seriesTotals = series.map((_, index) => days.reduce((sum, day) => sum + (day.values[index] ?? 0), 0))
  const summary = series.map((one, index) => `${(seriesTotals[index] ?? 0).toLocaleString('en')} ${one.name}`)
  const first = days[0]?.date ?? ''
  const last = days.at(-1)?.date ?? ''
  return (
    <figure className="chart">
      <figcaption>
        {title}
        <span className="chart-legend">
          {series.map((one, index) => (
            <span key={one.name}>
              <svg viewBox="0 0 10 10" className="swatch" aria-hidden="true">
                <rect width="10" height="10" className={one.className} />
              </svg>
              {one.name} ({(seriesTotals[index] ?? 0).toLocaleString('en')})
            </span>
          ))}
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img">
        <title>{`${title}, ${first} to ${last}: ${summary.join(', ')}`}</title>
        <line x1={left} x2={width} y1={height - bottom} y2={height - bottom} className="axis" />
        <text x={left - 6} y={top + 10} textAnchor="end" className="tick">
          {niceCeiling(max).toLocaleString('en')}
        </text>
        <text x={left - 6} y={height - bottom} textAnchor="end" className="tick">
          0
        </text>
        <text x={left} y={height - 5} className="tick">
          {first}
        </text>
        <text x={width} y={height - 5} textAnchor="end" className="tick">
          {last}
        </text>
        {days.map((day, dayIndex) => {
          let base = height - bottom
          const x = left + dayIndex * step + (step - barWidth) / 2
          return (
            <g key={day.date}>
              <title>
                {`${day.date}: ${series.map((one, index) => `${(day.values[index] ?? 0).toLocaleString('en')} ${one.name}`).join(', ')}`}
              </title>
              {/* A transparent column the full height, so a hover anywhere over the day shows its numbers. */}
              <rect
                x={left + dayIndex * step}
                y={top}
                width={step}
                height={height - top - bottom}
                className="hover"
              />
              {series.map((one, index) => {
                const value = day.values[index] ?? 0
                const barHeight = value * scale
                base -= barHeight
                return value === 0 ? null : (
                  <rect
                    key={one.name}
                    x={x}
                    y={base}
                    width={barWidth}
                    height={barHeight}
                    className={one.className}
                  />
                )
              })}
            </g>
          )
        })}
      </svg>
    </figure>
  )
}

/** The axis' top: 1, 2 or 5 times a power of ten, at least `max`. */
export function niceCeiling(max: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(1, max)))
  for (const factor of [1, 2, 5, 10]) {
    if (factor * power >= max) {
      return factor * power
    }
  }
  return 10 * power
}
