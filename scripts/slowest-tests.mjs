#!/usr/bin/env node
// Where the suite's time goes, read from the output of `npm test` or `node scripts/test.mjs …` (a
// file, or standard input): the slowest test files, side by side when the output holds several runs
// (CI's two Node passes, or a log before and one after a change), then the slowest single tests.
//
//   npm test 2>&1 | tee /tmp/test.log
//   node scripts/slowest-tests.mjs /tmp/test.log                 # the 25 slowest files and tests
//   node scripts/slowest-tests.mjs --top 50 before.log after.log # one column per run, compared
//
// The file times come from the table scripts/test-reporter.mjs prints before node's summary (each
// test process's wall time); the single tests' from the spec reporter's `✔ name (123.4ms)` lines.
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'

const args = process.argv.slice(2)
const topAt = args.indexOf('--top')
const top = topAt === -1 ? 25 : Number(args[topAt + 1])
const paths = args.filter((arg, i) => !arg.startsWith('--') && (topAt === -1 || i !== topAt + 1))
if (!Number.isInteger(top) || top < 1) {
  console.error('usage: node scripts/slowest-tests.mjs [--top N] [LOG…]  (standard input without LOG)')
  process.exit(2)
}

const logs = paths.length === 0 ? [{ name: 'stdin', text: readFileSync(0, 'utf8') }] : paths.map(read)

function read(path) {
  return { name: basename(path), text: readFileSync(path, 'utf8') }
}

// One run per "Test files by wall time" table: the files' times, the summary's wall time, its tests.
const runs = []
const slowTests = []
for (const log of logs) {
  const lines = log.text.split('\n')
  let table
  let suite = ''
  for (const line of lines) {
    const header = /^Test files by wall time \(/.exec(line)
    if (header) {
      table = new Map()
      runs.push({
        label: `${log.name}#${runs.filter((run) => run.log === log.name).length + 1}`,
        log: log.name,
        files: table,
      })
      continue
    }
    const row = /^ *(\d+(?:\.\d+)?) s {2}(\S+)$/.exec(line)
    if (row && table) {
      table.set(row[2], Number(row[1]))
      continue
    }
    const summary = /^ℹ duration_ms (\d+(?:\.\d+)?)$/.exec(line)
    if (summary && runs.length > 0) {
      runs[runs.length - 1].wallMs = Number(summary[1])
      table = undefined
      continue
    }
    const started = /^▶ (.+)$/.exec(line)
    if (started) {
      suite = started[1]
      continue
    }
    const test = /^ {2,}✔ (.+) \((\d+(?:\.\d+)?)ms\)$/.exec(line)
    if (test) {
      slowTests.push({ ms: Number(test[2]), name: test[1], suite })
    }
  }
}

if (runs.length === 0) {
  console.error('no "Test files by wall time" table found: give the output of npm test or scripts/test.mjs')
  process.exit(1)
}

const seconds = (ms) => (ms === undefined ? '—' : (ms / 1000).toFixed(1))
const width = Math.max(...runs.map((run) => run.label.length), 7)
const files = new Map()
for (const run of runs) {
  for (const [file, s] of run.files) {
    files.set(file, Math.max(files.get(file) ?? 0, s))
  }
}
const ranked = [...files.keys()].sort((a, b) => files.get(b) - files.get(a))
console.log(`Slowest test files (wall time of each file's process, seconds), ${ranked.length} files:`)
console.log(`${runs.map((run) => run.label.padStart(width)).join('  ')}  file`)
for (const file of ranked.slice(0, top)) {
  const cells = runs.map((run) =>
    (run.files.has(file) ? run.files.get(file).toFixed(1) : '—').padStart(width),
  )
  console.log(`${cells.join('  ')}  ${file}`)
}
const sum = (run) => [...run.files.values()].reduce((total, s) => total + s, 0)
console.log(`${runs.map((run) => sum(run).toFixed(0).padStart(width)).join('  ')}  all files together`)
console.log(
  `${runs.map((run) => seconds(run.wallMs).padStart(width)).join('  ')}  the run's wall time (duration_ms)`,
)

console.log(`\nSlowest single tests (ms, every run):`)
for (const test of slowTests.sort((a, b) => b.ms - a.ms).slice(0, top)) {
  console.log(`${test.ms.toFixed(0).padStart(7)}  ${test.suite} › ${test.name}`)
}
