import type { Registry } from 'prom-client'

/**
 * Request counts and durations by method, route pattern and status, kept as plain numbers and handed
 * to prom-client's registry only when `/metrics` is scraped (docs/decisions/0052-sqlite-validation-reader.md).
 * prom-client's `inc` and `observe` check and hash their label object on every call (2–3 µs a
 * request for the two metrics here); this finds its counters by two map lookups on strings the
 * request already holds. Same metric names, types, labels and text as prom-client's Counter and
 * Histogram with these labels.
 */
export class RequestTally {
  readonly #buckets: readonly number[]
  /** route pattern → method → its counts. */
  readonly #routes = new Map<string, Map<string, RouteCounts>>()

  constructor(buckets: readonly number[]) {
    this.#buckets = buckets
  }

  count(method: string, route: string, status: number, seconds: number): void {
    let methods = this.#routes.get(route)
    if (methods === undefined) {
      methods = new Map()
      this.#routes.set(route, methods)
    }
    let counts = methods.get(method)
    if (counts === undefined) {
      counts = { statuses: new Map(), inBucket: new Array(this.#buckets.length).fill(0), sum: 0, count: 0 }
      methods.set(method, counts)
    }
    counts.statuses.set(status, (counts.statuses.get(status) ?? 0) + 1)
    const buckets = this.#buckets
    for (let index = 0; index < buckets.length; index++) {
      if (seconds <= (buckets[index] ?? 0)) {
        counts.inBucket[index] = (counts.inBucket[index] ?? 0) + 1
        break
      }
    }
    counts.sum += seconds
    counts.count += 1
  }

  /** Registers the requests counter and the durations histogram under these names. */
  register(registry: Registry, names: { readonly requests: Described; readonly duration: Described }): void {
    const each = (visit: (labels: { method: string; route: string }, counts: RouteCounts) => void) => {
      for (const [route, methods] of this.#routes) {
        for (const [method, counts] of methods) {
          visit({ method, route }, counts)
        }
      }
    }
    registry.registerMetric(
      exported({ ...names.requests, type: 'counter' }, () => {
        const values: MetricValue[] = []
        each((labels, counts) => {
          for (const [status, value] of counts.statuses) {
            values.push({ labels: { ...labels, status: String(status) }, value })
          }
        })
        return values
      }),
    )
    const { name } = names.duration
    registry.registerMetric(
      exported({ ...names.duration, type: 'histogram' }, () => {
        const values: MetricValue[] = []
        each((labels, counts) => {
          let below = 0
          this.#buckets.forEach((bound, index) => {
            below += counts.inBucket[index] ?? 0
            values.push({
              labels: { le: bound },
              sharedLabels: labels,
              value: below,
              metricName: `${name}_bucket`,
            })
          })
          values.push(
            {
              labels: { le: '+Inf' },
              sharedLabels: labels,
              value: counts.count,
              metricName: `${name}_bucket`,
            },
            { labels: {}, sharedLabels: labels, value: counts.sum, metricName: `${name}_sum` },
            { labels: {}, sharedLabels: labels, value: counts.count, metricName: `${name}_count` },
          )
        })
        return values
      }),
    )
  }
}

interface RouteCounts {
  readonly statuses: Map<number, number>
  /** Requests per bucket (not cumulative), in the buckets' order; above the last: only in `count`. */
  readonly inBucket: number[]
  sum: number
  count: number
}

interface Described {
  readonly name: string
  readonly help: string
}

interface MetricValue {
  readonly labels: Record<string, string | number>
  readonly sharedLabels?: Record<string, string>
  readonly value: number
  readonly metricName?: string
}

/** What prom-client's registry reads from a metric (`Registry.getMetricsAsString`, `getMetricsAsJSON`). */
function exported(
  described: Described & { readonly type: 'counter' | 'histogram' },
  values: () => MetricValue[],
) {
  const metric = {
    ...described,
    aggregator: 'sum',
    get: async () => ({ ...described, aggregator: 'sum', values: values() }),
    reset: () => undefined,
  }
  return metric as unknown as Parameters<Registry['registerMetric']>[0]
}
