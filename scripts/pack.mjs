#!/usr/bin/env node
/**
 * Makes the installable tarballs from the built workspace (`npm run build` first):
 *
 * - `keyturn-client-<version>.tgz`: `npm pack` of packages/client as it is. Its dist already holds
 *   the protocol's compiled modules (packages/client/tsconfig.json), so it depends on no other
 *   `@keyturn` package.
 * - `keyturn-cli-<version>.tgz`: the `keyturn` command with the server, the client and the protocol
 *   bundled into it by esbuild (their third-party dependencies stay ordinary dependencies, so native
 *   modules such as better-sqlite3 install as usual) and the built dashboard beside the bundle.
 *
 * No tarball names a `@keyturn/*` dependency: that scope is not ours on the npm registry, and a
 * dependency on an unpublished name would install whatever someone published under it.
 *
 * Usage: node scripts/pack.mjs [OUT_DIR]   (default: ./packed); prints the tarballs' paths.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const readJson = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'))

/** `npm pack` of one folder into `outDir`; answers the tarball's path. */
function npmPack(folder, outDir) {
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', outDir], {
    cwd: folder,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [{ filename }] = JSON.parse(output)
  return join(outDir, filename)
}

/** The third-party dependencies of the bundled packages, one range per name (they must agree). */
function thirdPartyDependencies(packages) {
  const merged = {}
  for (const name of packages) {
    for (const [dependency, range] of Object.entries(
      readJson(`packages/${name}/package.json`).dependencies ?? {},
    )) {
      if (dependency.startsWith('@keyturn/')) {
        continue
      }
      if (merged[dependency] !== undefined && merged[dependency] !== range) {
        throw new Error(`${dependency}: packages ask for ${merged[dependency]} and ${range}; make them agree`)
      }
      merged[dependency] = range
    }
  }
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)))
}

async function packCli(outDir) {
  const cli = readJson('packages/cli/package.json')
  const dashboard = join(root, 'packages/dashboard/dist')
  for (const built of ['packages/cli/dist/main.js', 'packages/dashboard/dist/index.html']) {
    if (!existsSync(join(root, built))) {
      throw new Error(`${built} is missing: run \`npm run build\` first`)
    }
  }
  const stage = mkdtempSync(join(tmpdir(), 'keyturn-cli-stage-'))
  try {
    // Code splitting keeps the CLI's lazy imports lazy: API commands never load the server, and
    // `serve` holds V8's heap before the server's modules load (packages/cli/src/main.ts).
    await build({
      entryPoints: { main: join(root, 'packages/cli/dist/main.js') },
      outdir: join(stage, 'dist'),
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      sourcemap: true,
      logLevel: 'warning',
      plugins: [
        {
          name: 'bundle-only-keyturn',
          setup(esbuild) {
            // Everything but our own packages and relative files stays an import of a dependency.
            esbuild.onResolve({ filter: /^[^./]/ }, (args) =>
              args.path.startsWith('@keyturn/') ? undefined : { path: args.path, external: true },
            )
          },
        },
      ],
    })
    // The server looks for the dashboard beside its bundle first (packages/server/src/http/dashboard.ts).
    cpSync(dashboard, join(stage, 'dashboard'), { recursive: true })
    cpSync(join(root, 'packages/cli/bin'), join(stage, 'bin'), { recursive: true })
    cpSync(join(root, 'LICENSE'), join(stage, 'LICENSE'))
    const manifest = {
      name: cli.name,
      version: cli.version,
      description: cli.description,
      license: cli.license,
      type: 'module',
      engines: cli.engines,
      bin: cli.bin,
      files: ['bin', 'dist', 'dashboard'],
      dependencies: thirdPartyDependencies(['cli', 'server', 'client', 'protocol']),
    }
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    return npmPack(stage, outDir)
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

/** Packs the client and the CLI into `outDir`; answers `{ client, cli }`, the tarballs' paths. */
export async function packAll(outDir) {
  mkdirSync(outDir, { recursive: true })
  if (!existsSync(join(root, 'packages/client/dist/client/src/index.js'))) {
    throw new Error('packages/client/dist is missing: run `npm run build` first')
  }
  const client = npmPack(join(root, 'packages/client'), outDir)
  const cli = await packCli(outDir)
  return { client, cli }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { client, cli } = await packAll(resolve(process.argv[2] ?? 'packed'))
  console.log(client)
  console.log(cli)
}
