import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { sqliteServerEnvironment } from '@keyturn/server/testing/server-environments'
import { keyturn, waitFor, watchKeyturn } from './testing/keyturn-process.js'

/**
 * A file that, given to node with `--import`, records the URL of every ES module the process loads
 * (a module.register load hook) into `log`.
 */
function moduleRecorder(t: TestContext): { readonly nodeOptions: string; readonly loaded: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-modules-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const log = join(dir, 'loaded.txt')
  writeFileSync(log, '')
  const hooks = `import { appendFileSync } from 'node:fs'
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n')
  return next(url, context)
}`
  const recorder = join(dir, 'record-modules.mjs')
  writeFileSync(
    recorder,
    `import { register } from 'node:module'
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)})`,
  )
  return {
    nodeOptions: `--import=${recorder}`,
    loaded: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
  }
}

const apiClient = /\/packages\/client\/dist\//
const otherCommands = /\/packages\/cli\/dist\/(other-commands|license-csv|api)\.js$/

// The memory target (RSS <= 200 MB under load, docs/decisions/0025-memory-heap-limits.md) counts on
// `keyturn serve` running with V8's heap flags on its command line and leaving the CLI's other
// commands, CSV and the API client out of the server process.
describe('the modules keyturn serve loads', () => {
  it('are the server without the API client and the other commands, which every other command loads', async (t) => {
    const serving = moduleRecorder(t)
    const env = { ...(await sqliteServerEnvironment().fresh(t)), NODE_OPTIONS: serving.nodeOptions }
    const server = watchKeyturn(t, ['serve'], env, { patience: 60_000 })
    await waitFor(server, /Keyturn is listening on/)
    // The process that listens is the one started (replaced, not a child), with the heap flags.
    const commandLine = readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0')
    assert.deepEqual(
      commandLine.filter(
        (arg) => arg.startsWith('--max-semi-space-size') || arg.startsWith('--heap-growing-percent'),
      ),
      ['--max-semi-space-size=4', '--heap-growing-percent=100'],
    )
    const served = serving.loaded()
    assert.ok(
      served.some((url) => url.endsWith('/packages/server/dist/app.js')),
      served.join('\n'),
    )
    assert.deepEqual(
      served.filter((url) => apiClient.test(url) || otherCommands.test(url)),
      [],
    )

    const helping = moduleRecorder(t)
    const help = await keyturn(['--help'], { NODE_OPTIONS: helping.nodeOptions })
    assert.equal(help.code, 0, help.stderr)
    const helped = helping.loaded()
    assert.ok(
      helped.some((url) => otherCommands.test(url)),
      helped.join('\n'),
    )
    assert.ok(
      helped.some((url) => apiClient.test(url)),
      helped.join('\n'),
    )
  })
})
