/**
 * @module Runs `keyturn` inside the test's own process (runKeyturn, the function main.ts wraps), with
 * its stdout and stderr captured and its exit code returned: the same answers as the built binary
 * (testing/keyturn-process.ts) without starting a process per command. What only the binary can
 * show (exit codes through a real process, signals, `serve`) stays with keyturn-process.ts.
 */
import { Writable } from 'node:stream'
import type { Io } from '../io.js'
import { runKeyturn } from '../run.js'
import type { Finished } from './keyturn-process.js'

/** Upper bound for one command, as for the binary (a 5,000-row import on a busy machine takes minutes). */
const patience = 300_000

/** A stream that appends what is written to it to `text` (synchronously, so lines keep their order). */
function collector(sink: { text: string }): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      sink.text += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
      done()
    },
  })
}

/**
 * Runs `keyturn <args>` to the end with only `env` as its environment, as keyturn-process.ts's
 * `keyturn` does with a child process; `signal` is always null.
 */
export async function keyturn(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Finished> {
  const stdout = { text: '' }
  const stderr = { text: '' }
  const io: Io = {
    env: { ...env },
    print: (line) => {
      stdout.text += `${line}\n`
    },
    printError: (line) => {
      stderr.text += `${line}\n`
    },
    stdout: collector(stdout),
    stderr: collector(stderr),
    logs: {
      write: (text) => {
        stdout.text += text
      },
    },
    // No signal reaches an in-process command: long-running ones (serve, events tail) use the binary.
    untilShutdown: () => new Promise(() => {}),
  }
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `keyturn ${args.join(' ')} still running after ${patience} ms\n${stdout.text}\n${stderr.text}`,
          ),
        ),
      patience,
    )
  })
  try {
    const code = await Promise.race([runKeyturn(args, io), timeout])
    return { code, signal: null, stdout: stdout.text, stderr: stderr.text }
  } finally {
    clearTimeout(timer)
  }
}
