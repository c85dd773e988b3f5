/**
 * @module For fault journeys: `keyturn serve` on a fresh PostgreSQL schema reached through a TCP
 * proxy the test controls, its JSON log lines collected, and a small HTTP caller.
 */
import type { TestContext } from 'node:test'
import { postgresServerEnvironment } from './server-environments.js'
import { type ServerProcess, startServerProcess } from './server-process.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'

export interface Answer {
  readonly status: number
  readonly body: Record<string, unknown>
  readonly retryAfter: string | null
  readonly contentType: string | null
  /** Milliseconds from sending the request to reading the whole answer. */
  readonly ms: number
}

export interface FaultJourney {
  readonly keyturn: ServerProcess
  readonly proxy: TcpProxy
  /** The schema's URL without the proxy (for the test's own administrative queries). */
  readonly directUrl: string
  /** The log lines written so far. */
  logLines(): string[]
  call(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<Answer>
  /** Waits (at most 15 s) until `/readyz` answers 200: the pool found the database again by itself. */
  readyAgain(): Promise<void>
  /** A metric's value from `/metrics` (the first sample whose name and labels start so). */
  metric(sample: string): Promise<number | undefined>
  /** Several metrics' values, from one scrape. */
  metrics(...samples: string[]): Promise<(number | undefined)[]>
}

export const faultAdminKey = 'kt_admin_fault-journey-test-key-00000001'

export async function startFaultJourney(
  t: TestContext,
  postgresUrl: string,
  env: Record<string, string> = {},
): Promise<FaultJourney> {
  const server = new URL(postgresUrl)
  const proxy = await startTcpProxy(t, { host: server.hostname, port: Number(server.port) })
  const fresh = await postgresServerEnvironment(postgresUrl).fresh(t)
  const direct = new URL(fresh.KEYTURN_DATABASE_URL ?? '')
  const viaProxy = new URL(direct)
  viaProxy.host = `${proxy.host}:${proxy.port}`
  const keyturn = await startServerProcess(t, {
    ...fresh,
    LOG_LEVEL: 'warn',
    KEYTURN_ADMIN_KEY: faultAdminKey,
    KEYTURN_DATABASE_URL: viaProxy.toString(),
    ...env,
  })
  let logs = ''
  keyturn.child.stdout?.on('data', (chunk: string) => {
    logs += chunk
  })
  const call = async (method: string, path: string, body?: unknown, idempotencyKey?: string) => {
    const started = performance.now()
    const res = await fetch(`${keyturn.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${faultAdminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    return {
      status: res.status,
      body: (text === '' || !res.headers.get('content-type')?.includes('json')
        ? {}
        : JSON.parse(text)) as Record<string, unknown>,
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type'),
      ms: performance.now() - started,
    }
  }
  const metrics = async (...samples: string[]) => {
    const lines = (await (await fetch(`${keyturn.url}/metrics`)).text()).split('\n')
    return samples.map((sample) => {
      const line = lines.find((candidate) => candidate.startsWith(sample))
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
    })
  }
  return {
    keyturn,
    proxy,
    directUrl: direct.toString(),
    logLines: () => logs.split('\n').filter((line) => line.trim() !== ''),
    call,
    readyAgain: async () => {
      const deadline = performance.now() + 15_000
      let status = 0
      while (status !== 200 && performance.now() < deadline) {
        status = (await fetch(`${keyturn.url}/readyz`)).status
        if (status !== 200) {
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }
      if (status !== 200) {
        throw new Error(`/readyz still answers ${status}`)
      }
    },
    metric: async (sample) => (await metrics(sample))[0],
    metrics,
  }
}
