/**
 * @module Runs the built `keyturn` binary as a child process, as a user would: CLI tests check its
 * stdout, stderr and exit code against a real server.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The built CLI (`npm test` builds first). */
export const keyturnBin = fileURLToPath(new URL('../../dist/main.js', import.meta.url))
/** Upper bound for one command (most take well under a second; a 5,000-row import on a busy machine, minutes). */
const patience = 300_000

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface Running {
  readonly child: ChildProcess
  /** Resolves when the process exits; rejects after `patience` (and kills it). */
  readonly finished: Promise<Finished>
}

/** Starts `keyturn <args>` with only PATH and `env` in its environment. */
export function startKeyturn(args: readonly string[], env: Readonly<Record<string, string>> = {}): Running {
  const child = spawn(process.execPath, [keyturnBin, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const finished = new Promise<Finished>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`keyturn ${args.join(' ')} still running after ${patience} ms\n${stdout}\n${stderr}`))
    }, patience)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, finished }
}

/** Runs `keyturn <args>` to the end. */
export function keyturn(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Finished> {
  return startKeyturn(args, env).finished
}
