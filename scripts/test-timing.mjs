// Preloaded into every test process by scripts/test.mjs (node --import): when the process exits,
// appends its test file (by its source path) and wall time (since the process started) to KEYTURN_TEST_TIMINGS, which
// scripts/test-reporter.mjs prints before the summary.
import { appendFileSync } from 'node:fs'
import { relative } from 'node:path'

const out = process.env.KEYTURN_TEST_TIMINGS
const file = process.argv[1]
if (out && /\.test\.(ts|js)$/.test(file ?? '')) {
  process.once('exit', () => {
    // Named by its source: packages/<p>/dist/<x>.test.js was compiled from packages/<p>/src/<x>.test.ts.
    const source = relative(process.cwd(), file).replace(
      /^(packages\/[^/]+)\/dist\/(.+)\.test\.js$/,
      '$1/src/$2.test.ts',
    )
    const line = { file: source, ms: Math.round(performance.now()) }
    appendFileSync(out, `${JSON.stringify(line)}\n`)
  })
}
