#!/usr/bin/env node
// Several Keyturn processes starting at the same instant on one new SQLite file, many times over:
// counts the starts that fail, and says which statement failed and with which SQLite code. Not part
// of the suite (a few minutes); run it after changing how a SQLite connection opens or migrates.
//
//   npm run build   # or tsc -b: the script runs the built code
//   node scripts/sqlite-start-race.mjs                          # 200 rounds of 3 `connect` + migrate
//   node scripts/sqlite-start-race.mjs --rounds 50 --processes 2 --mode serve --load 1
//
// --mode connect   each process opens the file with storage/connect.ts and applies the migrations
//                  (what `keyturn serve` does first), then closes it
// --mode serve     each process is a whole `keyturn serve` (PORT=0), stopped once it listens
// --load N         N busy loops beside the processes, as on a loaded CI machine
// --dist DIR       the built server code for --mode connect (default packages/server/dist)
// --cli FILE       the built CLI for --mode serve (default packages/cli/dist/main.js)
// The processes load their code first, then all start on one signal, so their first statements meet.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]
}
const rounds = Number(option('rounds', '200'))
const processes = Number(option('processes', '3'))
const mode = option('mode', 'connect')
const load = Number(option('load', '0'))
/** The built server code the `connect` processes run (another build: compare before and after). */
const dist = resolve(option('dist', join(root, 'packages/server/dist')))
/** The built CLI the `serve` processes run (another checkout's: compare before and after). */
const cli = resolve(option('cli', join(root, 'packages/cli/dist/main.js')))
if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4])
} else {
  await parent()
}

async function parent() {
  if (!['connect', 'serve'].includes(mode) || !(rounds > 0) || !(processes > 1) || !(load >= 0)) {
    console.error(
      'usage: sqlite-start-race.mjs [--rounds N] [--processes N>1] [--mode connect|serve] [--load N]',
    )
    process.exit(2)
  }
  const loops = Array.from({ length: load }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  )
  const outcomes = new Map()
  let failedStarts = 0
  const started = Date.now()
  try {
    for (let round = 0; round < rounds; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'keyturn-start-race-'))
      const file = join(dir, 'data', 'keyturn.db')
      try {
        const results = await startTogether(file)
        for (const result of results) {
          outcomes.set(result, (outcomes.get(result) ?? 0) + 1)
          if (result !== 'ok') {
            failedStarts++
            console.log(`round ${round + 1}: ${result}`)
          }
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  } finally {
    for (const loop of loops) {
      loop.kill('SIGKILL')
    }
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0)
  console.log(
    `node ${process.version}, mode ${mode}, ${rounds} rounds of ${processes} processes, ${load} busy loops, ${seconds} s`,
  )
  console.log(`${failedStarts} of ${rounds * processes} starts failed`)
  for (const [result, count] of outcomes) {
    console.log(`  ${String(count).padStart(5)}  ${result}`)
  }
  process.exitCode = failedStarts === 0 ? 0 : 1
}

/** Starts the processes, lets them load, then gives them all the signal at once. */
async function startTogether(file) {
  const children = Array.from({ length: processes }, () => {
    const started = spawn(
      process.execPath,
      [fileURLToPath(import.meta.url), '--child', mode, file, '--dist', dist, '--cli', cli],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    let output = ''
    started.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk
    })
    started.stderr.setEncoding('utf8').on('data', (chunk) => {
      output += chunk
    })
    const closed = new Promise((resolve) => started.once('close', resolve))
    return { started, output: () => output, closed }
  })
  await Promise.all(
    children.map(
      ({ started, output }) =>
        new Promise((resolve, reject) => {
          const look = () => {
            if (output().includes('ready\n')) {
              started.stdout.off('data', look)
              resolve()
            }
          }
          started.stdout.on('data', look)
          started.once('exit', () => reject(new Error(`a process ended before it was ready:\n${output()}`)))
        }),
    ),
  )
  for (const { started } of children) {
    started.stdin.end('go\n')
  }
  await Promise.all(children.map(({ closed }) => closed))
  return children.map(({ output }) => /^result (.*)$/m.exec(output())?.[1] ?? `no result: ${output()}`)
}

/** One process: loads everything, waits for the signal, starts, prints `result …`. */
async function child(childMode, file) {
  const go = new Promise((resolve) => process.stdin.once('data', resolve))
  if (childMode === 'serve') {
    process.stdout.write('ready\n')
    await go
    console.log(`result ${await serveOnce(file)}`)
    return
  }
  const { connect } = await import(pathToFileURL(join(dist, 'storage/connect.js')).href)
  const { migrateToLatest } = await import(pathToFileURL(join(dist, 'storage/migrate.js')).href)
  // connect() loads the driver with the first database: loaded here, it takes no time after the signal.
  createRequire(join(root, 'packages/server/package.json'))('better-sqlite3')
  process.stdout.write('ready\n')
  await go
  let connection
  try {
    connection = connect({ kind: 'sqlite', path: file })
    await migrateToLatest(connection)
    console.log('result ok')
  } catch (error) {
    console.log(`result ${describe(error)}`)
  } finally {
    await connection?.close()
  }
}

/** A `keyturn serve` on `file`, stopped as soon as it listens: `ok`, or how it ended. */
async function serveOnce(file) {
  const server = spawn(process.execPath, [cli, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      LOG_LEVEL: 'silent',
      KEYTURN_DATABASE_URL: `sqlite:${file}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  return new Promise((resolve) => {
    const look = (chunk) => {
      output += chunk
      if (/Keyturn is listening on /.test(output)) {
        server.kill('SIGTERM')
        resolve('ok')
      }
    }
    server.stdout.setEncoding('utf8').on('data', look)
    server.stderr.setEncoding('utf8').on('data', look)
    server.once('exit', (code) => resolve(`exited with ${code}: ${output.trim().split('\n').at(-1)}`))
  })
}

/** The error's SQLite code and the first frame of Keyturn's code it came through. */
function describe(error) {
  let cause = error
  while (cause?.cause !== undefined && cause.code === undefined) {
    cause = cause.cause
  }
  const frame = String(cause?.stack ?? '')
    .split('\n')
    .find((line) => line.includes('/packages/'))
    ?.trim()
    .replace(root, '')
  return `${cause?.code ?? 'no code'}: ${cause?.message} (${frame ?? 'no frame'})`
}
