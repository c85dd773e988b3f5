/**
 * @module A throwaway `redis-server` (the Debian package) on a free loopback port, no persistence,
 * stopped after the test; `redisSkip` says why Redis tests cannot run here.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import type { TestContext } from 'node:test'
import { freePort } from './free-port.js'

function findRedisServer(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || undefined
  } catch {
    return undefined
  }
}

const redisServerBin = findRedisServer()

/** false when redis-server is installed, else the reason the Redis tests are skipped. */
export const redisSkip: string | false =
  redisServerBin === undefined
    ? 'redis-server is not installed (Debian: apt-get install redis-server)'
    : false

/** Starts redis-server for the rest of the test (suite); resolves to its URL once it accepts connections. */
export async function startRedis(t: Pick<TestContext, 'after'>): Promise<string> {
  if (redisServerBin === undefined) {
    throw new Error('redis-server is not installed')
  }
  const port = await freePort()
  const child: ChildProcess = spawn(
    redisServerBin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  t.after(() => {
    child.kill('SIGKILL')
  })
  await new Promise<void>((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 20_000)
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited (${code}):\n${output}`))
    })
  })
  return `redis://127.0.0.1:${port}`
}
