/**
 * @module `keyturn serve` as deploy/keyturn.service runs it (its Environment= lines), behind a real
 * nginx configured as deploy/nginx.conf proxies (its upstream and `location /` block), both on
 * loopback ports. Two clients on one machine are two loopback source addresses.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer, connect as tcpConnect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { serve } from '../main.js'
import { startServerProcess } from '../testing/server-process.js'

const deploy = new URL('../../../../deploy/', import.meta.url)
const adminKey = 'kt_admin_reverse-proxy-test-key-0000000000001'

/** The unit's `Environment=NAME=value` lines. */
function unitEnvironment(): Record<string, string> {
  const unit = readFileSync(new URL('keyturn.service', deploy), 'utf8')
  return Object.fromEntries(
    [...unit.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name ?? '', value ?? '']),
  )
}

/** deploy/nginx.conf's upstream and `location /` block, proxying to Keyturn on `port`, on a plain-HTTP loopback port. */
function nginxConfig(dir: string, listen: number, keyturnPort: number): string {
  const example = readFileSync(new URL('nginx.conf', deploy), 'utf8')
  const upstream = /^upstream keyturn \{[\s\S]*?^\}/m.exec(example)?.[0]
  const location = /^ {4}location \/ \{[\s\S]*?^ {4}\}/m.exec(example)?.[0]
  assert.ok(
    upstream !== undefined && location !== undefined,
    'deploy/nginx.conf has its upstream and location /',
  )
  return `
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${upstream.replace('127.0.0.1:3000', `127.0.0.1:${keyturnPort}`)}
  server {
    listen 127.0.0.1:${listen};
    client_max_body_size 64k;
${location}
  }
}
`
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  assert.ok(address !== null && typeof address === 'object')
  await new Promise((resolve) => server.close(resolve))
  return address.port
}

async function startNginx(t: TestContext, keyturnPort: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-nginx-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'logs'))
  const port = await freePort()
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, port, keyturnPort))
  const binary = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx'
  const child = spawn(binary, ['-e', join(dir, 'error.log'), '-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  })
  // Listening once a connection is accepted (nginx starts in a few milliseconds).
  for (const deadline = Date.now() + 10_000; ; ) {
    assert.equal(child.exitCode, null, `nginx exited: ${stderr}`)
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1', () => {
        socket.destroy()
        resolve(true)
      }).once('error', () => resolve(false))
    })
    if (accepted) {
      return port
    }
    assert.ok(Date.now() < deadline, `nginx did not listen on ${port}: ${stderr}`)
    await delay(20)
  }
}

interface Answer {
  readonly status: number
  readonly body: { readonly code?: string; readonly isValid?: boolean }
}

/** A POST through the proxy from the loopback address `from` (a client of its own). */
function post(port: number, from: string, path: string, secret: string, payload: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(payload)
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        method: 'POST',
        path,
        agent: false,
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
      },
    )
    req.once('error', reject)
    req.end(body)
  })
}

it('limits two clients behind nginx separately: 20 wrong keys lock out that client only', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keyturn-proxied-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const env: Record<string, string> = {
    ...unitEnvironment(),
    PORT: '0',
    LOG_LEVEL: 'warn',
    KEYTURN_DATABASE_URL: `sqlite:${join(dataDir, 'keyturn.db')}`,
    KEYTURN_ADMIN_KEY: adminKey,
  }
  assert.equal(env.KEYTURN_TRUST_PROXY, '127.0.0.1', 'the unit trusts the proxy on the same machine')
  const keyturn = await startServerProcess(t, env)
  const proxy = await startNginx(t, Number(new URL(keyturn.url).port))
  const admin = (path: string, payload: unknown) =>
    post(proxy, '127.0.0.1', `/api/v0${path}`, adminKey, payload)
  const product = (await admin('/products', { name: 'Proxied' })).body as { id: string }
  const license = (await admin('/licenses', { productId: product.id })).body as { key: string }
  const client = (await admin('/api-keys', { name: 'app', role: 'client', productId: product.id })).body as {
    secret: string
  }
  const validate = (from: string, key: string) =>
    post(proxy, from, '/v0/licenses/validate', client.secret, { key, productId: product.id })

  for (let guess = 0; guess < 20; guess++) {
    const wrong = await validate('127.0.0.2', `WRONG-${guess}`)
    assert.equal(wrong.body.code, 'license_not_found', `guess ${guess}: ${JSON.stringify(wrong.body)}`)
  }
  const guesser = await validate('127.0.0.2', license.key)
  const customer = await validate('127.0.0.3', license.key)

  assert.equal(guesser.status, 429, 'the client that guessed is blocked')
  assert.deepEqual([customer.status, customer.body.isValid], [200, true], 'the other client validates')
})

/** Warnings that name KEYTURN_TRUST_PROXY, after three requests that carry X-Forwarded-For. */
async function proxyWarnings(t: TestContext, trustProxy: string): Promise<string[]> {
  const logs: string[] = []
  const server = await serve(
    {
      PORT: '0',
      LOG_LEVEL: 'warn',
      KEYTURN_DATABASE_URL: 'sqlite::memory:',
      KEYTURN_TRUST_PROXY: trustProxy,
    },
    { print: () => {}, logs: { write: (line) => logs.push(line) } },
  )
  t.after(() => server.close())
  for (let request = 0; request < 3; request++) {
    const res = await fetch(`${server.url}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.7' } })
    assert.equal(res.status, 200)
  }
  return logs.filter((line) => line.includes('KEYTURN_TRUST_PROXY'))
}

it('warns once when X-Forwarded-For arrives from a peer KEYTURN_TRUST_PROXY does not trust, and not when it does', async (t) => {
  const untrusted = await proxyWarnings(t, 'false')
  const trusted = await proxyWarnings(t, '127.0.0.1')

  assert.equal(untrusted.length, 1, untrusted.join('\n'))
  assert.equal(JSON.parse(untrusted[0] ?? '{}').level, 40, 'a warning')
  assert.match(untrusted[0] ?? '', /set KEYTURN_TRUST_PROXY=127\.0\.0\.1/)
  assert.deepEqual(trusted, [])
})
