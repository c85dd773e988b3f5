/**
 * @module How far V8 may grow the heap of a `keyturn serve` process (RSS under load
 * ≤ 200 MB, docs/decisions/0025-memory-heap-limits.md; bench/history.md "Session 4: memory"). Out of the box V8 sizes the heap for throughput:
 * - the young generation grows to two semi-spaces of 16 MB (32 MB resident, busy or idle);
 * - after each full collection the old generation may grow to up to 4× what survived it (about
 *   50 MB live at 1M licenses: 200 MB of old space before the next full collection).
 * Under load that took the server from 140 MB at rest to 200–280 MB. Both are capped here, at run
 * time, for the process as it already runs: `keyturn serve` is started as `node …/main.js serve`
 * (npm start, systemd, the benchmark), where no node flag can be added, and
 * `--max-semi-space-size` is read only when the process starts. Two V8 flags are read on every
 * collection instead, and may be set later with `v8.setFlagsFromString`:
 * - `--semi-space-growth-factor`: 1 stops the young generation from growing; `keyturn serve` holds
 *   it while its modules load, then the observer below lets it double while it stays within the
 *   cap (and again if V8 shrank it at rest);
 * - `--heap-growing-percent`: the old generation grows to at most live × (1 + percent/100) before
 *   the next full collection (V8 adds a floor of a few MB). V8 computes that limit at the end of a
 *   full collection only, so `keyturn serve` sets it while its modules load too (see
 *   `holdHeapWhileLoading`).
 * Measured on 1M licenses (bench/history.md, "Session 4: memory"): a 4 MB semi-space and 100% growth cost about 3–5% of
 * validate's CPU per request; smaller values cost more (1 MB semi-spaces: +10%, 30% growth: p99 ×3).
 */
import { PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'

export interface HeapLimits {
  /** The largest semi-space of the young generation in MiB (V8 doubles it from 1: 1, 2, 4, 8, 16); 0: V8's own (16). */
  readonly semiSpaceMb: number
  /** How much the old generation may grow past what the last full collection kept, in %; 0: V8's own (up to 300). */
  readonly oldGrowthPercent: number
}

/** V8's default growth factor of the young generation (each step doubles a semi-space). */
const v8GrowthFactor = 2
const mebibyte = 1024 * 1024

let steering: PerformanceObserver | undefined
let isGrowing = true

/**
 * The old generation's growth while the modules load: KEYTURN_HEAP_GROWTH_PERCENT's default (this
 * module loads before the configuration, and must not load it).
 */
const loadingGrowthPercent = 100

/**
 * Holds the heap while the server's modules load, until `applyHeapLimits` applies the configured
 * limits. Call it before loading them:
 * - the young generation stops growing: loading the modules grows one left to V8 to its full 32 MB,
 *   and V8 gives that back only once the process is idle for a while;
 * - the old generation grows by 100% at most: the last full collection of the start-up (before the
 *   server listens, ~25–29 MB kept) sets the limit the first full collection under load waits for.
 *   With V8's own factor (4.0 at start-up) that limit was ~117 MB: the first full collection came
 *   at 65–100 MB of old space, 20–40 MB of RSS above what the configured growth allows, and made
 *   the target's SQLite peaks (185–211 MB in validate-signed or retrieve, against 155–162 MB with
 *   this; bench/history.md "Session 9"). Set here, the limit at listen is ~50–60 MB.
 */
export function holdHeapWhileLoading(): void {
  steering?.disconnect()
  steering = undefined
  setYoungGrowth(false)
  setFlagsFromString(`--heap-growing-percent=${loadingGrowthPercent}`)
}

/**
 * Applies `limits` to this process's V8 heap (process-wide; the last call wins; the old
 * generation's growth applies from the next full collection). Call it once the server listens:
 * while its start-up runs synchronously for long stretches, the young generation could grow twice
 * before the observer below sees it.
 */
export function applyHeapLimits(limits: HeapLimits): void {
  setFlagsFromString(`--heap-growing-percent=${limits.oldGrowthPercent}`)
  steering?.disconnect()
  steering = undefined
  if (limits.semiSpaceMb === 0) {
    setYoungGrowth(true)
    return
  }
  // The new space is two semi-spaces, and each growth doubles them: it may grow while doubling
  // stays within the cap (so the cap in effect is the largest power of two up to semiSpaceMb).
  const cap = 2 * limits.semiSpaceMb * mebibyte
  const steer = () => setYoungGrowth(2 * newSpaceBytes() <= cap)
  steer()
  // V8 grows the young generation only right after a collection of it: steering after each one
  // keeps it within the cap. The observer costs one entry per collection (a few a second under load).
  steering = new PerformanceObserver(steer)
  steering.observe({ entryTypes: ['gc'] })
}

/** The young generation's size now (both semi-spaces), in bytes. */
export function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
}

function setYoungGrowth(grow: boolean): void {
  if (grow !== isGrowing) {
    isGrowing = grow
    setFlagsFromString(`--semi-space-growth-factor=${grow ? v8GrowthFactor : 1}`)
  }
}
