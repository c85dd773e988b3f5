/**
 * @module The V8 flags that bound the heap of a `keyturn serve` process (RSS under load ≤ 200 MB,
 * docs/decisions/0025-memory-heap-limits.md). Out of the box V8 sizes the heap for throughput:
 * - the young generation grows to two semi-spaces of 16 MB (32 MB resident, busy or idle);
 * - after each full collection the old generation may grow to up to 4× what survived it (about
 *   50 MB live at 1M licenses: 200 MB of old space before the next full collection).
 * Under load that took the server from 140 MB at rest to 200–280 MB. Both are capped by flags on
 * Node's command line, given before any module loads: the `keyturn` command replaces its own process
 * with one started with them (packages/cli/src/main.ts), and `--workers` processes inherit them.
 * - `--max-semi-space-size=N` (KEYTURN_HEAP_SEMI_SPACE_MB): the young generation's semi-space
 *   doubles from 1 MB up to N and no further;
 * - `--heap-growing-percent=P` (KEYTURN_HEAP_GROWTH_PERCENT): the old generation grows to at most
 *   live × (1 + P/100) before the next full collection (V8 adds a floor of a few MB).
 * 0 leaves the choice to V8 (the flag is not given).
 */
import { type Config, loadConfig } from '../config.js'

/** The command-line flags for these limits, in a fixed order. */
export function heapFlags(limits: Config['heap']): string[] {
  const flags: string[] = []
  if (limits.semiSpaceMb > 0) {
    flags.push(`--max-semi-space-size=${limits.semiSpaceMb}`)
  }
  if (limits.oldGrowthPercent > 0) {
    flags.push(`--heap-growing-percent=${limits.oldGrowthPercent}`)
  }
  return flags
}

/**
 * The flags a `keyturn serve` process should run with under this environment; none when the
 * configuration is invalid (the server itself then reports every problem when it reads it).
 */
export function heapFlagsFor(env: Readonly<Record<string, string | undefined>>): string[] {
  try {
    return heapFlags(loadConfig(env).heap)
  } catch {
    return []
  }
}

/**
 * The flags of `wanted` this process was not started with (by name: a value given differently on
 * the command line, e.g. by an operator's own `node --max-semi-space-size=8`, is theirs to keep).
 */
export function missingHeapFlags(wanted: readonly string[], execArgv: readonly string[]): string[] {
  const given = new Set(execArgv.map((flag) => flag.split('=')[0]?.replaceAll('_', '-')))
  return wanted.filter((flag) => !given.has(flag.split('=')[0]))
}
