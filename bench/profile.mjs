/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): the functions with the most self time, and the
 * same folded by package (node_modules/<name>, Keyturn's packages, node internals).
 * Also runs on its own: `node bench/profile.mjs <file.cpuprofile> [top]`.
 */
import { readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(import.meta.dirname, '..')

function where(callFrame) {
  const url = callFrame.url
  if (url === '') {
    return '(native)'
  }
  const path = url.startsWith('file://') ? fileURLToPath(url) : url
  return path.startsWith('/') ? relative(root, path) : path
}

function packageOf(location) {
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(location)
  if (inModules?.[1] !== undefined) {
    return inModules[1]
  }
  const ours = /^packages\/([^/]+)\//.exec(location)
  if (ours?.[1] !== undefined) {
    return `@keyturn/${ours[1]}`
  }
  if (location.startsWith('node:')) {
    return 'node (JS internals)'
  }
  return location === '(native)' ? '(native / V8 / GC)' : location
}

/**
 * Rough kinds of work, for "where does the busy time go". Idle, module loading at start-up and
 * `writev` are left out of that view: the profiler samples wall time, so a socket write during which
 * the busy machine ran another process (the load generator) is counted as the write's.
 */
function kindOf(fn) {
  const { name, location } = fn
  if (name === '(idle)' || name === 'writev') {
    return undefined
  }
  if (
    /compileSourceTextModule|wrapSafe|openFileHandle|internalModuleStat|lstat|fstat|readFileUtf8|compileFunction|realpathSync/.test(
      name,
    )
  ) {
    return undefined
  }
  if (/kysely\/.*sqlite-driver/.test(location) && name === 'executeQuery') {
    return 'SQLite statement execution (native, inside Kysely executeQuery)'
  }
  if (/better-sqlite3/.test(location) || name === 'sqlite.prepare') {
    return 'better-sqlite3 prepare (SQL parsing and planning)'
  }
  if (/node_modules\/kysely/.test(location)) {
    return 'Kysely (query building, compiling, driver)'
  }
  if (/node_modules\/(pg|pg-[a-z]+)\//.test(location)) {
    return 'pg driver'
  }
  if (/crypto/.test(location) || /^(Hmac|digest|randomFillSync|digestsEqual|timingSafeEqual)$/.test(name)) {
    return 'crypto (API-key HMAC, random ids, signing)'
  }
  if (/^packages\//.test(location)) {
    return 'Keyturn code'
  }
  if (
    /node_modules\/(fastify|find-my-way|ajv|ajv-formats|fast-json-stringify|secure-json-parse|avvio|fast-uri|rfdc|light-my-request|@fastify)/.test(
      location,
    )
  ) {
    return 'Fastify, Ajv, serialisation'
  }
  if (/node_modules\/prom-client/.test(location)) {
    return 'prom-client (/metrics)'
  }
  if (/node_modules\/(jose)/.test(location)) {
    return 'jose'
  }
  if (name === '(garbage collector)') {
    return 'garbage collection'
  }
  if (/^node:|\(native\)/.test(location)) {
    return 'Node core (http, streams, timers), other native'
  }
  return 'other'
}

/**
 * `{ totalMs, functions: [{ name, location, selfMs, share }], packages: [{ name, selfMs, share }],
 * kinds: [{ name, selfMs, share }] }`; the shares of `kinds` are of the busy time only (see kindOf).
 */
export function summariseProfile(file, top = 30) {
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMicros = new Map()
  const deltas = profile.timeDeltas
  for (let i = 0; i < profile.samples.length; i++) {
    // A sample's time is the delta to the next sample.
    const delta = deltas[i + 1] ?? 0
    const id = profile.samples[i]
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta)
  }
  const byFunction = new Map()
  const byPackage = new Map()
  let total = 0
  for (const [id, micros] of selfMicros) {
    const node = nodes.get(id)
    if (node === undefined) {
      continue
    }
    const frame = node.callFrame
    const location = where(frame)
    const name = frame.functionName || '(anonymous)'
    const key = `${name} ${location}:${frame.lineNumber + 1}`
    const entry = byFunction.get(key) ?? { name, location: `${location}:${frame.lineNumber + 1}`, micros: 0 }
    entry.micros += micros
    byFunction.set(key, entry)
    const pkg =
      name === '(idle)'
        ? '(idle)'
        : ['(garbage collector)', '(program)'].includes(name)
          ? name
          : packageOf(location)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros)
    total += micros
  }
  const share = (micros) => micros / total
  const byKind = new Map()
  let busy = 0
  for (const fn of byFunction.values()) {
    const kind = kindOf(fn)
    if (kind !== undefined) {
      byKind.set(kind, (byKind.get(kind) ?? 0) + fn.micros)
      busy += fn.micros
    }
  }
  return {
    busyMs: busy / 1000,
    kinds: [...byKind.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, micros]) => ({ name, selfMs: micros / 1000, share: micros / busy })),
    totalMs: total / 1000,
    functions: [...byFunction.values()]
      .sort((a, b) => b.micros - a.micros)
      .slice(0, top)
      .map((f) => ({ name: f.name, location: f.location, selfMs: f.micros / 1000, share: share(f.micros) })),
    packages: [...byPackage.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, micros]) => ({ name, selfMs: micros / 1000, share: share(micros) })),
  }
}

export function profileMarkdown(summary, title) {
  const pct = (share) => `${(share * 100).toFixed(1)}%`
  return [
    `## ${title}`,
    '',
    `Total sampled time: ${(summary.totalMs / 1000).toFixed(1)} s (including idle).`,
    '',
    `### Where the busy time goes (${(summary.busyMs / 1000).toFixed(1)} s: without idle, start-up and writev)`,
    '',
    '| kind of work | self ms | share |',
    '| --- | ---: | ---: |',
    ...summary.kinds.map((k) => `| ${k.name} | ${k.selfMs.toFixed(0)} | ${pct(k.share)} |`),
    '',
    '### Self time by package',
    '',
    '| package | self ms | share |',
    '| --- | ---: | ---: |',
    ...summary.packages.map((p) => `| ${p.name} | ${p.selfMs.toFixed(0)} | ${pct(p.share)} |`),
    '',
    '### Top functions by self time',
    '',
    '| function | where | self ms | share |',
    '| --- | --- | ---: | ---: |',
    ...summary.functions.map(
      (f) =>
        `| ${f.name.replaceAll('|', '\\|')} | ${f.location} | ${f.selfMs.toFixed(0)} | ${pct(f.share)} |`,
    ),
    '',
  ].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2]
  if (file === undefined) {
    console.error('usage: node bench/profile.mjs <file.cpuprofile> [top]')
    process.exit(2)
  }
  console.log(profileMarkdown(summariseProfile(file, Number(process.argv[3] ?? 30)), file))
}
