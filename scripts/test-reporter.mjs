// node's spec reporter, plus the wall time of each test file (scripts/test-timing.mjs), slowest
// first, printed just before the summary so the output still ends with node's summary.
import { existsSync, readFileSync } from 'node:fs'
import { Transform } from 'node:stream'
import { spec } from 'node:test/reporters'

export default class Reporter extends Transform {
  #spec = new spec()
  #printed = false

  constructor() {
    super({ writableObjectMode: true })
    this.#spec.on('data', (chunk) => this.push(chunk))
  }

  _transform(event, _encoding, callback) {
    const isSummary =
      event.type === 'test:diagnostic' && event.data.nesting === 0 && /^tests \d+$/.test(event.data.message)
    if (isSummary && !this.#printed) {
      this.#printed = true
      // Let the spec reporter's pending output go first.
      setImmediate(() => {
        this.push(durations())
        this.#spec.write(event, callback)
      })
      return
    }
    this.#spec.write(event, callback)
  }

  _flush(callback) {
    this.#spec.once('end', () => callback())
    this.#spec.end()
  }
}

function durations() {
  const path = process.env.KEYTURN_TEST_TIMINGS
  if (!path || !existsSync(path)) {
    return ''
  }
  const rows = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
    .sort((a, b) => b.ms - a.ms)
  if (rows.length === 0) {
    return ''
  }
  const total = rows.reduce((sum, row) => sum + row.ms, 0)
  const lines = rows.map((row) => `${(row.ms / 1000).toFixed(1).padStart(7)} s  ${row.file}`)
  return `\nTest files by wall time (${rows.length} files, ${(total / 1000).toFixed(0)} s in all):\n${lines.join('\n')}\n\n`
}
