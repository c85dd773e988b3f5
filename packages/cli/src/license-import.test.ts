import assert from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import type { LicenseResource } from '@keyturn/client'
import { closedPortUrl } from '@keyturn/server/testing/listening-app'
import { keyturn } from './testing/keyturn-in-process.js'
import { startKeyturn } from './testing/keyturn-process.js'
import { type CliTestServer, licenseCount, startCliTestServer } from './testing/test-server.js'

function aFile(t: TestContext, name: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-import-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

/** Every license of the product, read back through `keyturn licenses export`. */
async function exported(server: CliTestServer, productId = server.productId): Promise<LicenseResource[]> {
  const run = await keyturn(['licenses', 'export', '--product', productId, '--format', 'jsonl'], server.env)
  assert.equal(run.code, 0, run.stderr)
  return run.stdout
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
}

// On SQLite only: the server side of a resumed import (claims, replays, concurrent retries) runs on
// both engines in packages/server/src/idempotency and journeys/idempotency-across-processes.
describe('keyturn licenses import of 5,000 rows', () => {
  it('resumes after being killed half-way: every row once, none twice', async (t) => {
    const server = await startCliTestServer(t)
    const rows = Array.from({ length: 5000 }, (_, n) => `${server.productId},${n + 1},2031-01-01T00:00:00Z`)
    const file = aFile(t, 'licenses.csv', `productId,maxActivations,expirationDate\n${rows.join('\n')}\n`)

    const first = startKeyturn(['licenses', 'import', file], server.env)
    let countAtKill = 0
    for (
      const deadline = Date.now() + 300_000;
      countAtKill < 2500;
      countAtKill = await licenseCount(server)
    ) {
      assert.ok(Date.now() < deadline, 'the import got nowhere near half-way within five minutes')
      assert.equal(first.child.exitCode, null, 'the first run ended before it was interrupted')
      await delay(20)
    }
    first.child.kill('SIGKILL')
    const killed = await first.finished
    const resumed = await keyturn(['licenses', 'import', file], server.env)

    assert.equal(killed.signal, 'SIGKILL')
    assert.ok(countAtKill < 5000, `interrupted half-way, at ${countAtKill}`)
    assert.equal(resumed.code, 0, resumed.stderr)
    const [, earlier] =
      /^Imported 5000 of 5000 rows \((\d+) of them by an earlier run\)\.\n$/.exec(resumed.stdout) ?? []
    assert.ok(Number(earlier) >= countAtKill, resumed.stdout)
    const licenses = await exported(server)
    assert.equal(licenses.length, 5000)
    assert.deepEqual(
      licenses.map((license) => license.maxActivations).sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: 5000 }, (_, n) => n + 1),
    )
  })
})

describe('keyturn licenses import', () => {
  it('imports the good rows, lists each bad one on stderr with its line and reason, and exits 1', async (t) => {
    const server = await startCliTestServer(t)
    const p = server.productId
    const file = aFile(
      t,
      'licenses.csv',
      [
        'productId,maxActivations,expirationDate',
        `${p},1,2031-01-01T00:00:00Z`,
        `${p},many,`,
        'prd_unknown,1,',
        `${p},2,2020-01-01T00:00:00Z`,
        `${p},3,,extra`,
        `${p},null,null`,
        '',
      ].join('\n'),
    )

    const first = await keyturn(['licenses', 'import', file], server.env)
    const again = await keyturn(['licenses', 'import', file], server.env)

    assert.equal(first.code, 1)
    const reasons = first.stderr.trimEnd().split('\n')
    assert.equal(reasons.length, 3, first.stderr)
    assert.equal(reasons[0], 'line 3: maxActivations must be integer or null')
    assert.match(reasons[1] ?? '', /^line 4: product_not_found: .+ \(req_\w+\)$/)
    assert.match(reasons[2] ?? '', /^line 6: .*columns length is 3, got 4/)
    // A date that has passed makes an expired license (a move keeps licenses that ran out).
    assert.equal(first.stdout, 'Imported 3 of 6 rows; 3 failed (listed on stderr).\n')
    assert.equal(again.code, 1)
    const withoutRequestIds = (text: string) => text.replaceAll(/ \(req_\w+\)/g, '')
    assert.equal(withoutRequestIds(again.stderr), withoutRequestIds(first.stderr), 'the same refusals')
    assert.equal(
      again.stdout,
      'Imported 3 of 6 rows (3 of them by an earlier run); 3 failed (listed on stderr).\n',
    )
    const licenses = await exported(server)
    assert.deepEqual(licenses.map((license) => license.maxActivations).sort(), [1, 2, null])
  })

  it('knows rows by their externalId, whatever their order or file, and prints a JSON summary', async (t) => {
    const server = await startCliTestServer(t)
    const line = (externalId: string, maxActivations: number) =>
      JSON.stringify({ externalId, productId: server.productId, maxActivations })
    const first = aFile(t, 'first.jsonl', `${line('a', 1)}\n${line('b', 2)}\n\n${line('c', 3)}\n`)
    const second = aFile(t, 'second.jsonl', `${line('d', 4)}\n${line('c', 3)}\n${line('a', 1)}\n`)

    const run1 = await keyturn(['licenses', 'import', first, '--json'], server.env)
    const run2 = await keyturn(['licenses', 'import', second, '--json'], server.env)

    assert.equal(run1.code, 0, run1.stderr)
    const summary = JSON.parse(run1.stdout)
    assert.deepEqual(
      { ...summary, licenses: summary.licenses.map((l: { line: number }) => l.line) },
      {
        file: first,
        rows: 3,
        created: 3,
        alreadyImported: 0,
        failed: 0,
        revoked: 0,
        policiesMapped: {},
        licenses: [1, 2, 4],
        failures: [],
      },
    )
    assert.match(summary.licenses[0].id, /^lic_/)
    assert.equal(run2.code, 0, run2.stderr)
    assert.deepEqual([JSON.parse(run2.stdout).created, JSON.parse(run2.stdout).alreadyImported], [1, 2])
    assert.equal(await licenseCount(server), 4)
  })

  it("counts rows as this run's when its own attempt went unanswered and the retry got the server's replay", async (t) => {
    const server = await startCliTestServer(t)
    // A proxy that lets the first import through to the server, then hangs up without answering.
    let hungUp = 0
    const proxy = createServer(async (request, response) => {
      const chunks: Buffer[] = []
      for await (const chunk of request) {
        chunks.push(chunk as Buffer)
      }
      const body = Buffer.concat(chunks)
      const upstream = await fetch(`${server.baseUrl}${request.url}`, {
        method: request.method,
        headers: Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length'),
        ) as Record<string, string>,
        ...(body.length === 0 ? {} : { body }),
      })
      const answer = Buffer.from(await upstream.arrayBuffer())
      if (request.url?.endsWith('/licenses/import') && hungUp === 0) {
        hungUp++
        request.socket.destroy()
        return
      }
      response.writeHead(upstream.status, Object.fromEntries(upstream.headers))
      response.end(answer)
    })
    proxy.listen(0, '127.0.0.1')
    await once(proxy, 'listening')
    t.after(() => proxy.close())
    const { port } = proxy.address() as AddressInfo
    const line = (externalId: string) => JSON.stringify({ externalId, productId: server.productId })
    const file = aFile(t, 'once.jsonl', `${line('a')}\n${line('b')}\n`)

    const run = await keyturn(['licenses', 'import', file], {
      ...server.env,
      KEYTURN_URL: `http://127.0.0.1:${port}`,
    })

    assert.equal(hungUp, 1, 'the first answer was lost on the way')
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stdout, 'Imported 2 of 2 rows.\n', 'not "by an earlier run": this run made them')
    assert.equal(await licenseCount(server), 2)
  })

  it('reports JSON Lines that are not objects of known fields by line', async (t) => {
    const server = await startCliTestServer(t)
    const file = aFile(
      t,
      'rows.jsonl',
      `{"productId":"${server.productId}"}\nnot json\n[1]\n{"productId":"${server.productId}","plan":"pro"}\n`,
    )

    const run = await keyturn(['licenses', 'import', file, '--json'], server.env)

    assert.equal(run.code, 1)
    assert.deepEqual(JSON.parse(run.stdout).failures, [
      { line: 2, kind: 'failed', detail: 'not a JSON value' },
      { line: 3, kind: 'failed', detail: 'not a JSON object' },
      { line: 4, kind: 'failed', detail: 'unknown field plan' },
    ])
    assert.equal(
      run.stderr,
      'line 2: not a JSON value\nline 3: not a JSON object\nline 4: unknown field plan\n',
    )
  })

  it('exits 2 for an unknown column, format or file, before creating anything', async (t) => {
    const server = await startCliTestServer(t)
    const unknownColumn = aFile(t, 'a.csv', `productId,plan\n${server.productId},pro\n`)
    const unknownFormat = aFile(t, 'a.txt', `productId\n${server.productId}\n`)

    const [column, format, missing, concurrency] = await Promise.all([
      keyturn(['licenses', 'import', unknownColumn], server.env),
      keyturn(['licenses', 'import', unknownFormat], server.env),
      keyturn(['licenses', 'import', join(tmpdir(), 'no-such-file.csv')], server.env),
      keyturn(['licenses', 'import', unknownColumn, '--concurrency', '0'], server.env),
    ])

    assert.deepEqual(
      [column.code, column.stderr],
      [
        2,
        'error: unknown column plan: the columns are productId, maxActivations, expirationDate, heartbeatTtl, maxUses, customerEmail, customerId, policyId, entitlements, metadata (or metadata.<key>), status and externalId; with --keep-keys also key, uses and activations\n',
      ],
    )
    assert.equal(format.code, 2)
    assert.match(format.stderr, /^error: cannot tell the format of .*a\.txt/)
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /^error: cannot read /)
    assert.deepEqual(
      [concurrency.code, concurrency.stderr],
      [2, 'error: --concurrency must be an integer from 1 to 64\n'],
    )
    assert.equal(await licenseCount(server), 0)
  })

  it('exits 3 when the server cannot be reached, saying to run it again', async (t) => {
    const file = aFile(t, 'a.csv', 'productId\nprd_x\n')

    const run = await keyturn(['licenses', 'import', file], {
      KEYTURN_URL: await closedPortUrl(),
      KEYTURN_API_KEY: 'kt_admin_x',
    })

    assert.equal(run.code, 3)
    assert.match(run.stderr, /^cannot reach the server: .*0 of 1 rows were done: run the same import again/)
  })
})
