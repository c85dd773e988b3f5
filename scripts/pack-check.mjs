#!/usr/bin/env node
/**
 * The installable packages work outside this repository (docs/packages.md). After `npm run build`:
 *
 * 1. scripts/pack.mjs makes the client's and the CLI's tarballs; neither names a `@keyturn/*`
 *    dependency nor imports one.
 * 2. A scratch application in a temporary folder installs both tarballs (and Deno and Bun, whose
 *    npm packages carry their binaries), as a user would.
 * 3. Its `keyturn serve` starts on SQLite and serves the API and the dashboard; the installed client
 *    (Node, ESM) creates a product and a license, activates a machine and obtains a license token.
 * 4. Node, Deno and Bun each import the installed client and validate that token offline.
 * 5. A typed TypeScript file compiles with `tsc --strict` against the installed types alone.
 * 6. esbuild bundles the installed client for browsers.
 *
 * Usage: node scripts/pack-check.mjs   (exits non-zero on the first failure)
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { packAll } from './pack.mjs'

/** The runtimes the client must run on besides Node (npm packages that ship their binaries). */
const runtimes = { deno: '2.9.6', bun: '1.4.5' }
const adminKey = 'kt_admin_pack-check-0000000000000000000000'
const root = fileURLToPath(new URL('..', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'keyturn-pack-check-'))
const app = join(work, 'app')

const started = performance.now()
const step = (text) =>
  console.log(`pack-check: [${((performance.now() - started) / 1000).toFixed(1)} s] ${text}`)
const run = (command, args, options = {}) =>
  execFileSync(command, args, {
    cwd: app,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    ...options,
  })

/** Fails when an unpacked package names or imports another `@keyturn/*` package. */
function assertSelfContained(tarball) {
  const folder = mkdtempSync(join(work, 'unpacked-'))
  execFileSync('tar', ['xzf', tarball, '-C', folder])
  const manifest = JSON.parse(readFileSync(join(folder, 'package/package.json'), 'utf8'))
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    const named = Object.keys(manifest[field] ?? {}).filter((name) => name.startsWith('@keyturn/'))
    if (named.length > 0) {
      throw new Error(`${manifest.name}'s ${field} name ${named.join(', ')}, which no registry has`)
    }
  }
  // Static imports and re-exports (not the examples in doc comments), import() types, require().
  const importOfOurs =
    /^\s*(?:import|export)\b[^;]*?from\s*['"]@keyturn\/|(?:import|require)\s*\(\s*['"]@keyturn\//m
  const files = readdirSync(join(folder, 'package'), { recursive: true }).filter((file) =>
    /\.(?:js|mjs|d\.ts)$/.test(file),
  )
  for (const file of files) {
    if (importOfOurs.test(readFileSync(join(folder, 'package', file), 'utf8'))) {
      throw new Error(`${manifest.name}: ${file} imports a @keyturn package that is not in the tarball`)
    }
  }
  return manifest.name
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

async function waitUntilReady(url, server, log) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (server.exitCode !== null) {
      throw new Error(`keyturn serve exited with ${server.exitCode}:\n${readFileSync(log, 'utf8')}`)
    }
    try {
      if ((await fetch(`${url}/readyz`)).ok) {
        return
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`keyturn serve was not ready within 60 s:\n${readFileSync(log, 'utf8')}`)
}

// The application's files: what a user of the packages writes.
const files = {
  // Both binaries come in platform packages (@deno/linux-x64-glibc, @oven/bun-linux-x64). Deno's
  // launcher finds its own without an install script; Bun's install script links its binary from
  // the platform package (it would fetch that package only if npm had not installed it).
  'package.json': JSON.stringify({
    name: 'scratch-app',
    private: true,
    type: 'module',
    allowScripts: { deno: false, bun: true },
  }),
  // Online, with the installed client: a product, a license, an activation and a token.
  'make-token.mjs': `
import { writeFileSync } from 'node:fs'
import { KeyturnClient } from '@keyturn/client'

const keyturn = new KeyturnClient({ baseUrl: process.env.KEYTURN_URL, apiKey: process.env.KEYTURN_API_KEY })
const product = await keyturn.createProduct({ name: 'Pack check' })
const license = await keyturn.createLicense({ productId: product.id })
const fingerprint = 'pack-check-machine'
await keyturn.activateLicenseByKey({ key: license.key, productId: product.id, fingerprint })
const { token } = await keyturn.createLicenseTokenByKey({ key: license.key, productId: product.id, fingerprint })
writeFileSync('token.json', JSON.stringify({ token, publicKey: product.publicKey, productId: product.id, licenseId: license.id, fingerprint }))
`,
  // Offline, in Node, Deno and Bun alike.
  'verify.mjs': `
import { readFileSync } from 'node:fs'
import { LicenseTokenError, validateLicenseToken } from '@keyturn/client'

const runtime = globalThis.Deno ? 'Deno' : globalThis.Bun ? 'Bun' : 'Node'
const { token, publicKey, productId, licenseId, fingerprint } = JSON.parse(readFileSync('token.json', 'utf8'))
const result = await validateLicenseToken({ productId, publicKey, token, fingerprint })
if (result.licenseId !== licenseId) throw new Error(runtime + ': validated the wrong license ' + result.licenseId)
try {
  await validateLicenseToken({ productId, publicKey, token, fingerprint, now: new Date('2999-01-01T00:00:00Z') })
  throw new Error(runtime + ': accepted an expired token')
} catch (error) {
  if (!(error instanceof LicenseTokenError) || error.code !== 'expired') throw error
}
console.log(runtime + ' validated license ' + result.licenseId + ' offline and refused it once expired')
`,
  // Types: strict TypeScript against the installed declarations only.
  'typed.ts': `
import { KeyturnClient, type OfflineValidationResult, validateLicenseToken } from '@keyturn/client'

export async function licenseIdOf(token: string, publicKey: string, productId: string): Promise<string> {
  const result: OfflineValidationResult = await validateLicenseToken({ productId, publicKey, token })
  return result.licenseId
}

export async function activate(keyturn: KeyturnClient, key: string, productId: \`prd_\${string}\`): Promise<string> {
  const activation = await keyturn.activateLicenseByKey({ key, productId, fingerprint: 'machine-1' })
  // The declarations, the protocol's included, are real types and not \`any\`:
  // @ts-expect-error an activation id is a string
  const wrong: number = activation.id
  void wrong
  return activation.id
}

// @ts-expect-error a product id is a string
void validateLicenseToken({ productId: 42, publicKey: '', token: '' })
`,
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      strict: true,
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      lib: ['es2023', 'dom'],
      types: [],
      noEmit: true,
      // Checking every installed .d.ts (TypeBox's type-level parser) takes about a minute; the
      // expected errors above show the client's own declarations resolve.
      skipLibCheck: true,
    },
    files: ['typed.ts'],
  }),
  'browser.mjs': `
import { KeyturnClient, validateLicenseToken, verifyWebhook } from '@keyturn/client'
globalThis.keyturn = { KeyturnClient, validateLicenseToken, verifyWebhook }
`,
}

let server
try {
  step('packing')
  const { client, cli } = await packAll(join(work, 'tarballs'))
  for (const tarball of [client, cli]) {
    step(`${assertSelfContained(tarball)}: no @keyturn dependency, no import of one`)
  }

  mkdirSync(app)
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(app, name), text)
  }
  step('installing the tarballs into a scratch application')
  const versions = Object.entries(runtimes).map(([name, version]) => `${name}@${version}`)
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', client, cli, ...versions], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  step(`keyturn --version: ${run(join(app, 'node_modules/.bin/keyturn'), ['--version']).trim()}`)

  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const log = join(work, 'serve.log')
  const logFile = (await import('node:fs')).openSync(log, 'w')
  server = spawn(join(app, 'node_modules/.bin/keyturn'), ['serve'], {
    cwd: app,
    stdio: ['ignore', logFile, logFile],
    env: {
      ...process.env,
      PORT: String(port),
      KEYTURN_ADMIN_KEY: adminKey,
      KEYTURN_DATABASE_URL: `sqlite:${join(work, 'keyturn.db')}`,
      LOG_LEVEL: 'warn',
    },
  })
  await waitUntilReady(url, server, log)
  const dashboard = await fetch(`${url}/dashboard/`)
  if (!dashboard.ok || !(await dashboard.text()).includes('<div id="root">')) {
    throw new Error(`the installed CLI's server does not serve the dashboard (${dashboard.status})`)
  }
  step('keyturn serve from the tarball: ready, serves the API and the dashboard')

  run('node', ['make-token.mjs'], { env: { ...process.env, KEYTURN_URL: url, KEYTURN_API_KEY: adminKey } })
  step('Node (ESM): product, license, activation and token through the installed client')
  server.kill('SIGTERM')

  step(run('node', ['verify.mjs']).trim())
  step(run(join(app, 'node_modules/.bin/deno'), ['run', '--allow-read', '--allow-env', 'verify.mjs']).trim())
  step(run(join(app, 'node_modules/.bin/bun'), ['verify.mjs']).trim())

  run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'])
  step('tsc --strict compiles a typed call against the installed declarations')

  const bundle = await build({
    absWorkingDir: app,
    entryPoints: ['browser.mjs'],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  })
  const [output] = bundle.outputFiles
  step(`esbuild browser bundle of the installed client: ${(output.contents.length / 1024).toFixed(1)} KiB`)
  step('all checks passed')
} catch (error) {
  console.error(`pack-check: FAILED: ${error instanceof Error ? error.message : error}`)
  process.exitCode = 1
} finally {
  server?.kill('SIGTERM')
  if (server !== undefined && server.exitCode === null) {
    await new Promise((resolve) => server.once('exit', resolve))
  }
  rmSync(work, { recursive: true, force: true })
}
