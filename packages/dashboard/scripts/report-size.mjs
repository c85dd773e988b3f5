#!/usr/bin/env node
// Prints the JavaScript a browser loads before the dashboard's first screen (the entry script and
// the chunks index.html preloads), gzipped, and fails the build above its budget (docs/decisions/0009-dashboard.md).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const budgetKb = 250
const dist = join(import.meta.dirname, '..', 'dist')
const html = readFileSync(join(dist, 'index.html'), 'utf8')
const files = [...html.matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"]+\.js)"/g)].map((match) => match[1])
let total = 0
for (const file of files) {
  total += gzipSync(readFileSync(join(dist, file)), { level: 9 }).length
}
const kb = (total / 1024).toFixed(1)
process.stdout.write(
  `Dashboard initial JavaScript: ${kb} KB gzipped in ${files.length} file(s) (budget ${budgetKb} KB)\n`,
)
if (files.length === 0 || total > budgetKb * 1024) {
  process.stderr.write(files.length === 0 ? 'index.html loads no script\n' : 'Over budget\n')
  process.exit(1)
}
