// Preloaded into every test process by scripts/test.mjs (node --import): when the process exits,
// appends its test file and wall time (since the process started) to KEYTURN_TEST_TIMINGS, which
// scripts/test-reporter.mjs prints before the summary.
import { appendFileSync } from 'node:fs'
import { relative } from 'node:path'

const out = process.env.KEYTURN_TEST_TIMINGS
const file = process.argv[1]
if (out && file?.endsWith('.test.ts')) {
  process.once('exit', () => {
    const line = { file: relative(process.cwd(), file), ms: Math.round(performance.now()) }
    appendFileSync(out, `${JSON.stringify(line)}\n`)
  })
}
