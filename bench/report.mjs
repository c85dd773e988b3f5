/**
 * Turns the measurements into the report: each scenario against its ceiling, the issue's targets
 * judged (in full mode only), one table printed to stdout and written as Markdown, and everything
 * as JSON.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'

/** Which ceiling each kind of work is measured against (see bench/README.md). */
export const ceilingNames = {
  http: 'bare Fastify',
  insertCommit: 'raw insert + commit',
  joseSign: 'jose EdDSA sign',
  nodeVerify: 'node:crypto Ed25519 verify',
}

/**
 * The targets (bench/README.md "Targets"), SQLite unless stated. `ratio` is the scenario's rate over its ceiling's;
 * derived targets compare two scenarios.
 */
const targets = [
  // Validate's throughput is judged against the one-lookup route (validateVsLookup below); its tail
  // here, and under the second load generator (wrk) too.
  { engine: 'sqlite', size: 'large', id: 'validate', maxP99: 10 },
  { engine: 'postgres', size: 'large', id: 'validate', minRatio: 0.35, maxP99: 10 },
  // Lists at 1M, both engines: p99 ≤ 150 ms with 10 connections, p50 ≤ 30 ms with 1 client.
  ...['sqlite', 'postgres'].flatMap((engine) =>
    ['list-page-0', 'list-deep-page', 'list-starting-after'].flatMap((id) => [
      { engine, size: 'large', id, maxP99: 150 },
      { engine, size: 'large', id: `${id}-one-client`, maxP50: 30 },
    ]),
  ),
  { engine: 'sqlite', size: 'large', id: 'create', minRatio: 0.7 },
  // PostgreSQL's writes against its own raw insert with 10 in flight, and the token at 75% of
  // jose's signing, both engines.
  { engine: 'postgres', size: 'large', id: 'create', minRatio: 0.35 },
  { engine: 'postgres', size: 'large', id: 'activate', minRatio: 0.35 },
  { engine: 'sqlite', size: 'large', id: 'token', minRatio: 0.6 },
  { engine: 'postgres', size: 'large', id: 'token', minRatio: 0.6 },
  { engine: 'in-process', size: undefined, id: 'client-validate', minRatio: 0.8 },
  { engine: 'in-process', size: undefined, id: 'client-verify-file', minRatio: 0.8 },
  // A billing webhook's lookup by subscription id (a GIN index on PostgreSQL; SQLite's
  // cost is measured and documented, not targeted), and a customer's licenses.
  { engine: 'postgres', size: 'large', id: 'metadata-lookup', maxP50: 20 },
  { engine: 'postgres', size: 'large', id: 'customer-lookup', maxP50: 20 },
  { engine: 'sqlite', size: 'large', id: 'customer-lookup', maxP50: 20 },
  // Global search at 1M, both engines: well under 300 ms per search.
  { engine: 'sqlite', size: 'large', id: 'search', maxP99: 300 },
  { engine: 'postgres', size: 'large', id: 'search', maxP99: 300 },
]

const derived = [
  {
    id: 'validate-large-vs-small',
    title: (r) => `validate, ${count(r.settings.licenses.large)} vs ${count(r.settings.licenses.small)}`,
    of: ['validate', 'large'],
    over: ['validate', 'small'],
    min: { sqlite: 0.9 },
  },
  {
    // Signing an answer costs at most 25% of validate's throughput.
    id: 'validate-signed-vs-unsigned',
    title: () => 'validate with a signed answer vs unsigned (paired rounds)',
    of: ['validate-signed', 'large'],
    over: ['validate', 'large'],
    paired: true,
    min: { sqlite: 0.75, postgres: 0.75 },
  },
  // Recording events costs the write paths at most 15% (event rows dropped by a trigger
  // in the -no-events runs; bench/events.mjs).
  // A ratio marked `paired` is the median of paired alternating rounds (run.mjs measurePairs) when
  // they ran, else the ratio of the two scenarios' own runs.
  // The token's ratio is reported without a target: the target names create and activate, and with
  // its event row dropped a token issue writes nothing, so that ratio compares a durable write with
  // a read (docs/decisions/0012-events-and-unit-of-work.md).
  ...['create', 'activate', 'token'].map((id) => ({
    id: `${id}-events-vs-none`,
    title: () =>
      `${id === 'token' ? 'token' : id === 'create' ? 'create license' : 'activate'} with its event vs without the row (paired rounds)`,
    of: [id, 'large'],
    over: [`${id}-no-events`, 'large'],
    paired: true,
    ...(id === 'token' ? {} : { min: { sqlite: 0.85, postgres: 0.85 } }),
  })),
  {
    // A license file costs about what a token does: issuing one reaches 70% of a token's rate.
    id: 'license-file-vs-token',
    title: () => 'issue a license file vs generate token (paired rounds)',
    of: ['license-file', 'large'],
    over: ['token', 'large'],
    paired: true,
    min: { sqlite: 0.7, postgres: 0.7 },
  },
  {
    // Retrieve by id reaches at least validate's figure on each engine.
    id: 'retrieve-vs-validate',
    title: () => 'retrieve by id vs validate by key (paired rounds)',
    of: ['retrieve', 'large'],
    over: ['validate', 'large'],
    paired: true,
    min: { sqlite: 1, postgres: 1 },
  },
  {
    // Slow clients: 10,000 idle connections (and 100 slowloris requests) keep validate's p99 within
    // 3x of its p99 without them. A ratio of p99s (`by: 'p99'`, judged by `max`), not of rates.
    id: 'validate-idle-connections-p99',
    title: () => "validate's p99 with 10,000 idle connections vs without",
    of: ['validate-idle-connections', 'large'],
    over: ['validate', 'large'],
    by: 'p99',
    max: { sqlite: 3, postgres: 3 },
  },
  {
    id: 'starting-after-vs-page-0',
    title: () => 'list starting_after (deep) vs page 0',
    of: ['list-starting-after', 'large'],
    over: ['list-page-0', 'large'],
    min: { sqlite: 1 / 1.5 },
  },
]

/** Validate by key over the one-lookup route, per engine (autocannon's runs and wrk's rounds). */
const validateVsLookup = { min: { sqlite: 0.5 } }
/** Validate's p99 under wrk, both engines, in ms. */
const wrkMaxP99 = 10

/** The ratios measured again in paired rounds (run.mjs measurePairs): scenario `of` over `over`. */
export const pairedRatios = derived
  .filter((d) => d.paired === true)
  .map((d) => ({ id: d.id, of: d.of[0], over: d.over[0] }))

const maxRssMiB = 200

export function count(n) {
  if (n >= 1_000_000 && n % 1_000_000 === 0) {
    return `${n / 1_000_000}M`
  }
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n)
}

function ceilingFor(results, scenario) {
  const ceilings = results.ceilings
  switch (scenario.ceiling) {
    case 'http':
      return { name: ceilingNames.http, rate: ceilings.http?.rps }
    case 'insertCommit':
      return {
        name: `${ceilingNames.insertCommit} (${scenario.engine})`,
        rate: ceilings[scenario.engine]?.insertCommit?.opsPerSecond,
      }
    case 'joseSign':
      return { name: ceilingNames.joseSign, rate: ceilings.crypto?.joseSign?.opsPerSecond }
    case 'nodeVerify':
      return { name: ceilingNames.nodeVerify, rate: ceilings.crypto?.nodeVerify?.opsPerSecond }
    default:
      return { name: '—', rate: undefined }
  }
}

function judge(checks, judged) {
  if (checks.length === 0) {
    return undefined
  }
  const text = checks.map((check) => check.text).join('; ')
  if (!judged) {
    return { text, result: 'not judged (quick)' }
  }
  if (checks.some((check) => check.pass === undefined)) {
    return { text, result: 'n/a' }
  }
  return { text, result: checks.every((check) => check.pass) ? 'pass' : 'FAIL' }
}

/** Adds `ratio`, `ceiling` and `target` to every scenario row and builds the derived rows. */
export function evaluate(results) {
  const judged = results.mode === 'full'
  const rows = results.scenarios.map((scenario) => {
    const ceiling = ceilingFor(results, scenario)
    const ratio =
      scenario.rps !== undefined && ceiling.rate !== undefined ? scenario.rps / ceiling.rate : undefined
    const spec = targets.find(
      (t) => t.id === scenario.id && t.engine === scenario.engine && t.size === scenario.size,
    )
    const checks = []
    if (spec?.minRatio !== undefined) {
      checks.push({
        text: `>= ${Math.round(spec.minRatio * 100)}% of ${ceiling.name}`,
        pass: ratio === undefined ? undefined : ratio >= spec.minRatio,
      })
    }
    if (spec?.maxP99 !== undefined) {
      const p99 = scenario.latency?.p99
      checks.push({
        text: `p99 <= ${spec.maxP99} ms`,
        pass: p99 === undefined || scenario.problem !== undefined ? undefined : p99 <= spec.maxP99,
      })
    }
    if (spec?.maxP50 !== undefined) {
      const p50 = scenario.latency?.p50
      checks.push({
        text: `p50 <= ${spec.maxP50} ms`,
        pass: p50 === undefined || scenario.problem !== undefined ? undefined : p50 <= spec.maxP50,
      })
    }
    // The same comparison by the server's CPU time per response: steadier on a busy machine.
    const cpu = scenario.serverCpu?.microsecondsPerRequest
    const cpuRatio =
      scenario.ceiling === 'http' && cpu !== undefined && results.ceilings.http?.cpuPerRequest !== undefined
        ? results.ceilings.http.cpuPerRequest / cpu
        : undefined
    return { ...scenario, ceilingName: ceiling.name, ratio, cpuRatio, target: judge(checks, judged) }
  })

  const find = (engine, id, size) => rows.find((r) => r.engine === engine && r.id === id && r.size === size)
  const extra = []
  for (const engine of results.engines) {
    // Validate against the least a per-request read costs on this engine (reported).
    const lookup = results.ceilings[engine]?.lookupHttp
    const validate = find(engine, 'validate', 'large')
    const minVsLookup = validateVsLookup.min[engine]
    const judgeVsLookup = (ratio) =>
      minVsLookup === undefined
        ? undefined
        : judge([{ text: `>= ${Math.round(minVsLookup * 100)}%`, pass: ratio >= minVsLookup }], judged)
    if (lookup !== undefined && validate?.rps !== undefined) {
      const ratio = validate.rps / lookup.rps
      extra.push({
        kind: 'derived',
        id: 'validate-vs-one-lookup',
        engine,
        title: 'validate by key vs Fastify + one lookup by key',
        ratio,
        target: judgeVsLookup(ratio),
      })
    }
    // The second load generator: the same ratio from wrk's rounds, and validate's tail under it.
    const wrk = (results.wrk ?? []).find((entry) => entry.engine === engine)
    if (wrk?.unavailable !== undefined) {
      extra.push({
        kind: 'derived',
        id: 'validate-wrk',
        engine,
        title: `validate under wrk: ${wrk.unavailable}`,
      })
    } else if (wrk !== undefined) {
      extra.push({
        kind: 'derived',
        id: 'validate-vs-one-lookup-wrk',
        engine,
        title: `validate by key vs Fastify + one lookup by key, under wrk (median of ${wrk.rounds} alternating rounds)`,
        ratio: wrk.ratio,
        target: judgeVsLookup(wrk.ratio),
      })
      for (const [which, title] of [
        ['lookup', 'Fastify + one lookup by key'],
        ['validate', 'validate by key'],
      ]) {
        const measured = wrk[which]
        extra.push({
          kind: 'derived',
          id: `${which}-wrk`,
          engine,
          title: `${title}, under wrk (2 threads; medians, worst p99 ${ms(measured.worstP99)} ms)`,
          rate: measured.rps,
          p50: measured.p50,
          p99: measured.p99,
          cpu: measured.cpuPerRequest,
          ...(which === 'validate'
            ? {
                target: judge(
                  [
                    {
                      text: `p99 <= ${wrkMaxP99} ms`,
                      pass: measured.unexpected > 0 ? undefined : measured.p99 <= wrkMaxP99,
                    },
                  ],
                  judged,
                ),
              }
            : {}),
        })
      }
    }
    // Search runs a few index probes per request: against the same one-lookup ceiling.
    const search = find(engine, 'search', 'large')
    if (lookup !== undefined && search?.rps !== undefined) {
      extra.push({
        kind: 'derived',
        id: 'search-vs-one-lookup',
        engine,
        title: 'search vs Fastify + one lookup by key',
        ratio: search.rps / lookup.rps,
      })
    }
    for (const d of derived) {
      const of = find(engine, ...d.of)
      const over = find(engine, ...d.over)
      const paired = (results.paired ?? []).find((p) => p.engine === engine && p.id === d.id)
      const ratio =
        d.by === 'p99'
          ? of?.latency?.p99 !== undefined && over?.latency?.p99 > 0
            ? of.latency.p99 / over.latency.p99
            : undefined
          : paired !== undefined
            ? paired.ratio
            : of?.rps !== undefined && over?.rps !== undefined
              ? of.rps / over.rps
              : undefined
      const min = d.min?.[engine]
      const max = d.max?.[engine]
      extra.push({
        kind: 'derived',
        id: d.id,
        engine,
        title: d.title(results),
        ratio,
        target:
          min !== undefined
            ? judge(
                [
                  {
                    text: `>= ${Math.round(min * 100)}%`,
                    pass: ratio === undefined ? undefined : ratio >= min,
                  },
                ],
                judged,
              )
            : max !== undefined
              ? judge(
                  [
                    {
                      text: `<= ${Math.round(max * 100)}%`,
                      pass: ratio === undefined ? undefined : ratio <= max,
                    },
                  ],
                  judged,
                )
              : undefined,
      })
    }
    // The idle-connections run's memory is its 10,100 connections' (~8.5 KB each; bench/history.md,
    // "Idle connections"): the target is the server's under load, not the connections'.
    const large = rows.filter(
      (r) =>
        r.engine === engine &&
        r.size === 'large' &&
        r.rss?.peak !== undefined &&
        r.id !== 'validate-idle-connections',
    )
    const peak = large.reduce(
      (top, r) => (top === undefined || r.rss.peak > top.rss.peak ? r : top),
      undefined,
    )
    extra.push({
      kind: 'derived',
      id: 'rss',
      engine,
      title: `server RSS under load, ${count(results.settings.licenses.large)} (peak${peak ? `: ${peak.id}` : ''})`,
      rssPeak: peak?.rss.peak,
      // Both engines.
      target: judge(
        [
          {
            text: `RSS <= ${maxRssMiB} MB`,
            pass: peak === undefined ? undefined : peak.rss.peak <= maxRssMiB,
          },
        ],
        judged,
      ),
    })
  }
  return { rows, derived: extra }
}

const fixed = (value, digits = 0) =>
  value === undefined || Number.isNaN(value)
    ? '—'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const ms = (value) => (value === undefined ? '—' : value < 10 ? fixed(value, 2) : fixed(value, 1))
const percent = (value) => (value === undefined ? '—' : `${fixed(value * 100, 0)}%`)

/** The table's columns; numeric ones are right-aligned. */
const columns = [
  { key: 'title', title: 'scenario' },
  { key: 'engine', title: 'engine' },
  { key: 'licenses', title: 'licenses', numeric: true },
  { key: 'rate', title: 'req/s', numeric: true },
  { key: 'p50', title: 'p50 ms', numeric: true },
  { key: 'p99', title: 'p99 ms', numeric: true },
  { key: 'responses', title: 'responses', numeric: true },
  { key: 'cpu', title: 'CPU µs/req', numeric: true },
  { key: 'rss', title: 'RSS MB', numeric: true },
  { key: 'ceiling', title: 'ceiling' },
  { key: 'ratio', title: 'of ceiling', numeric: true },
  { key: 'cpuRatio', title: 'by CPU', numeric: true },
  { key: 'target', title: 'target' },
  { key: 'result', title: 'result' },
]

/** The table's rows as arrays of cells: ceilings, then scenarios, then derived checks. */
export function tableRows(results, evaluated) {
  const lines = []
  const add = (cells) => lines.push(columns.map((column) => cells[column.key] ?? ''))
  const c = results.ceilings
  const inProcess = (title, engine, m) =>
    add({
      title,
      engine,
      rate: fixed(m?.opsPerSecond),
      p50: ms(m?.p50),
      p99: ms(m?.p99),
      ceiling: '(ceiling)',
    })
  const httpRuns = c.http?.runs ?? []
  add({
    title: `bare Fastify GET (own process, ${httpRuns.length === 1 ? '1 run' : `${httpRuns.length} runs`}: ${httpRuns.map((r) => fixed(r.rps)).join(' / ')})`,
    rate: fixed(c.http?.rps),
    p50: ms(c.http?.latency?.p50),
    p99: ms(c.http?.latency?.p99),
    responses: fixed(httpRuns[0]?.requests),
    cpu: fixed(c.http?.cpuPerRequest),
    rss: fixed(c.http?.rss?.peak),
    ceiling: '(ceiling)',
  })
  const lookupSize = count(results.settings.licenses.large)
  inProcess(`better-sqlite3 point lookup (${lookupSize})`, 'sqlite', c.sqlite?.pointLookup)
  inProcess('better-sqlite3 insert + commit', 'sqlite', c.sqlite?.insertCommit)
  inProcess(`pg point lookup (${lookupSize}, 10 in flight)`, 'postgres', c.postgres?.pointLookup)
  inProcess('pg insert + commit (10 in flight)', 'postgres', c.postgres?.insertCommit)
  // The one-lookup ceilings (bench/lookup-fastify.mjs): HTTP, against bare Fastify.
  for (const engine of ['sqlite', 'postgres']) {
    const lookup = c[engine]?.lookupHttp
    if (lookup !== undefined) {
      const cpu = lookup.serverCpu?.microsecondsPerRequest
      add({
        title: `Fastify + one lookup by key (${engine === 'sqlite' ? 'better-sqlite3' : 'pg, 10 connections'}, ${lookupSize})`,
        engine,
        rate: fixed(lookup.rps),
        p50: ms(lookup.latency?.p50),
        p99: ms(lookup.latency?.p99),
        responses: fixed(lookup.requests),
        cpu: fixed(cpu),
        rss: fixed(lookup.rss?.peak),
        ceiling: '(ceiling) vs bare Fastify',
        ratio: percent(c.http?.rps === undefined ? undefined : lookup.rps / c.http.rps),
        cpuRatio: percent(cpu === undefined ? undefined : c.http?.cpuPerRequest / cpu),
      })
    }
  }
  inProcess('jose EdDSA sign', '', c.crypto?.joseSign)
  inProcess('jose EdDSA verify', '', c.crypto?.joseVerify)
  inProcess('node:crypto Ed25519 verify', '', c.crypto?.nodeVerify)

  for (const row of evaluated.rows) {
    const status = row.unavailable ?? row.skipped ?? row.problem
    add({
      title: row.note === undefined ? row.title : `${row.title} (${row.note})`,
      engine: row.engine,
      licenses: row.licenses === undefined ? '' : count(row.licenses),
      rate: status === undefined ? fixed(row.rps) : (row.problem ?? 'not available'),
      p50: ms(row.latency?.p50),
      p99: ms(row.latency?.p99),
      responses: fixed(row.requests),
      cpu: fixed(row.serverCpu?.microsecondsPerRequest),
      rss: fixed(row.rss?.peak),
      ceiling: row.ceilingName,
      ratio: percent(row.ratio),
      cpuRatio: percent(row.cpuRatio),
      target: row.target?.text,
      result: row.target?.result ?? (row.skipped === undefined ? '' : 'skipped'),
    })
  }
  for (const row of evaluated.derived) {
    add({
      title: row.title,
      engine: row.engine,
      rate: row.rate === undefined ? '' : fixed(row.rate),
      p50: row.p50 === undefined ? '' : ms(row.p50),
      p99: row.p99 === undefined ? '' : ms(row.p99),
      cpu: row.cpu === undefined ? '' : fixed(row.cpu),
      rss: row.rssPeak === undefined ? '' : fixed(row.rssPeak),
      ratio: row.id === 'rss' ? '' : percent(row.ratio),
      target: row.target?.text,
      result: row.target?.result,
    })
  }
  return lines
}

export function textTable(lines) {
  const header = columns.map((column) => column.title)
  const all = [header, ...lines]
  const widths = header.map((_, i) => Math.max(...all.map((line) => String(line[i]).length)))
  const format = (line) =>
    line
      .map((cell, i) =>
        columns[i]?.numeric ? String(cell).padStart(widths[i]) : String(cell).padEnd(widths[i]),
      )
      .join('  ')
      .trimEnd()
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(format)].join('\n')
}

export function markdown(results, lines) {
  const escapeCell = (cell) => String(cell).replaceAll('|', '\\|')
  const row = (cells) => `| ${cells.map(escapeCell).join(' | ')} |`
  const s = results.settings
  const seeding = results.seeding
    .map((seed) => `${count(seed.licenses)} on ${seed.engine} in ${fixed(seed.seconds, 1)} s`)
    .join(', ')
  return [
    `## Benchmark results (${results.mode} run, ${results.finishedAt})`,
    '',
    `Machine: ${results.machine.cpus} × ${results.machine.cpuModel}, Node ${results.machine.node}, ` +
      `${results.postgres.version ?? (results.postgres.skipped === undefined ? 'PostgreSQL not run' : `PostgreSQL skipped: ${results.postgres.skipped}`)}. ` +
      `Load average ${results.machine.loadAverage.start.map((l) => l.toFixed(1)).join(' ')} at the start, ` +
      `${results.machine.loadAverage.end.map((l) => l.toFixed(1)).join(' ')} at the end.`,
    '',
    `Load: autocannon, ${s.connections} connections, ${s.warmupSeconds} s warm-up then ${s.durationSeconds} s ` +
      `measured per scenario; in-process operations ${s.inProcessSeconds} s each. Seeding: ${seeding}.` +
      ((results.workers ?? 1) > 1
        ? ` Keyturn: \`keyturn serve --workers ${results.workers}\` (RSS and CPU: the primary and its workers together).`
        : '') +
      (Object.keys(results.env ?? {}).length > 0
        ? ` Settings: ${Object.entries(results.env)
            .map(([name, value]) => `\`${name}=${value}\``)
            .join(', ')}.`
        : ''),
    '',
    row(columns.map((column) => column.title)),
    row(columns.map((column) => (column.numeric ? '---:' : '---'))),
    ...lines.map(row),
    '',
    ...runtimeSection(results),
  ].join('\n')
}

/**
 * Keyturn's event-loop delay and GC time during each measured run (from its own /metrics, scraped
 * at the start and end of the measured time): where a latency tail comes from.
 */
function runtimeSection(results) {
  const measured = results.scenarios.filter((scenario) => scenario.runtime !== undefined)
  if (measured.length === 0) {
    return []
  }
  const gcPerSecond = (scenario, kinds) =>
    kinds.reduce((sum, kind) => sum + (scenario.runtime.gcMs[kind] ?? 0), 0) / (scenario.seconds ?? 1)
  return [
    '### The server during each run',
    '',
    'Event-loop delay (ms, beyond the 10 ms interval at which prom-client samples it) and garbage-collection time (ms per second measured) of `keyturn serve`.',
    '',
    '| scenario | engine | licenses | p99 ms | loop delay p50 | loop delay p99 | loop delay max | GC minor ms/s | GC major + incremental ms/s |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...measured.map(
      (scenario) =>
        `| ${scenario.title} | ${scenario.engine} | ${scenario.licenses === undefined ? '' : count(scenario.licenses)} | ` +
        `${ms(scenario.latency?.p99)} | ${ms(scenario.runtime.eventLoopDelay.p50)} | ${ms(scenario.runtime.eventLoopDelay.p99)} | ` +
        `${ms(scenario.runtime.eventLoopDelay.max)} | ${fixed(gcPerSecond(scenario, ['minor']), 1)} | ` +
        `${fixed(gcPerSecond(scenario, ['major', 'incremental']), 1)} |`,
    ),
    '',
  ]
}

export function writeReport(results, jsonPath, markdownPath, lines) {
  mkdirSync(dirname(jsonPath), { recursive: true })
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`)
  writeFileSync(markdownPath, markdown(results, lines))
}
