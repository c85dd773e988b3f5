#!/usr/bin/env node
// The live scenario's server (conformance/scenario.md): starts `keyturn serve` on a throwaway SQLite
// database and a free port, sets up a product, a client API key and two licenses through the API,
// prints one line of JSON (address, keys, licenses) on stdout, then runs until stdin closes or it
// gets SIGTERM / SIGINT, when it stops the server and deletes the database. Needs the built CLI
// (`npm ci` builds it). Usage: node conformance/serve.mjs
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const cli = resolve(import.meta.dirname, '..', 'packages', 'cli', 'dist', 'main.js')
/** Unknown-key guesses a client key may make from one address before it gets 429 with Retry-After. */
const guessLimit = 3
/** Longer than any SDK waits for a Retry-After (20 s): the 429 is answered to the caller, not retried. */
const guessBlockSeconds = 120
const patience = 30_000

const directory = mkdtempSync(join(tmpdir(), 'keyturn-conformance-'))
const adminKey = `kt_admin_conformance_${randomBytes(16).toString('hex')}`
const child = spawn(process.execPath, [cli, 'serve'], {
  env: {
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: '0',
    KEYTURN_DATABASE_URL: `sqlite:${join(directory, 'keyturn.db')}`,
    KEYTURN_ADMIN_KEY: adminKey,
    KEYTURN_GUESS_LIMIT: String(guessLimit),
    KEYTURN_GUESS_BLOCK_SECONDS: String(guessBlockSeconds),
  },
  stdio: ['ignore', 'pipe', 'pipe'],
})

let stopping = false
function stop(code = 0) {
  if (stopping) {
    return
  }
  stopping = true
  const done = () => {
    rmSync(directory, { recursive: true, force: true })
    process.exit(code)
  }
  if (child.exitCode !== null || child.signalCode !== null) {
    done()
    return
  }
  child.once('exit', done)
  child.kill('SIGTERM')
  setTimeout(() => child.kill('SIGKILL'), patience).unref()
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => stop(0))
}
process.stdin.on('end', () => stop(0))
process.stdin.on('close', () => stop(0))
process.stdin.resume()

let output = ''
const baseUrl = await new Promise((resolveUrl, reject) => {
  const timer = setTimeout(() => reject(new Error(`keyturn serve did not start:\n${output}`)), patience)
  const look = (chunk) => {
    output = `${output}${chunk}`.slice(-20_000)
    const match = /Keyturn is listening on (http:\/\/\S+?) /.exec(output)
    if (match?.[1] !== undefined) {
      clearTimeout(timer)
      resolveUrl(match[1])
    }
  }
  child.stdout.setEncoding('utf8').on('data', look)
  child.stderr.setEncoding('utf8').on('data', look)
  child.once('exit', (code) => {
    clearTimeout(timer)
    reject(new Error(`keyturn serve exited with ${code}:\n${output}`))
  })
}).catch((error) => {
  process.stderr.write(`${error.message}\n`)
  stop(1)
})
if (baseUrl === undefined) {
  await new Promise(() => {}) // stop() exits
}

async function api(method, path, body) {
  const response = await fetch(`${baseUrl}/api/v0${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const answer = await response.json()
  if (!response.ok) {
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`)
  }
  return answer
}

try {
  const product = await api('POST', '/products', { name: 'Conformance scenario' })
  const clientKey = await api('POST', '/api-keys', {
    name: 'Conformance scenario application',
    role: 'client',
    productId: product.id,
  })
  const main = await api('POST', '/licenses', { productId: product.id, maxActivations: 2 })
  const full = await api('POST', '/licenses', { productId: product.id, maxActivations: 1 })
  await api('POST', `/licenses/${full.id}/activations`, { fingerprint: 'scenario-another-machine' })
  const scenario = {
    baseUrl,
    adminKey,
    clientKey: clientKey.secret,
    productId: product.id,
    publicKeyPem: product.publicKey,
    publicKeyJwk: product.publicKeyJwk,
    keyId: product.keyId,
    licenses: {
      main: { id: main.id, key: main.key, maxActivations: 2 },
      full: { id: full.id, key: full.key, maxActivations: 1 },
    },
    guessLimit,
    guessBlockSeconds,
  }
  process.stdout.write(`${JSON.stringify(scenario)}\n`)
} catch (error) {
  process.stderr.write(`The scenario could not be set up: ${error.message}\n${output}\n`)
  stop(1)
}
