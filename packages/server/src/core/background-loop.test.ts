import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type BackgroundJob, type BackgroundLog, startBackgroundWork } from './background-loop.js'

/** Pauses long enough that a loop that went idle never steps again during a test. */
const idleMs = 3_600_000

function recordingLog(): BackgroundLog & { readonly errors: string[] } {
  const errors: string[] = []
  return { errors, info: () => {}, error: (_fields, message) => errors.push(message) }
}

describe('background work', () => {
  it('steps again at once while a job reports more work, then rests; stop ends every loop', async () => {
    const steps: string[] = []
    let idle: () => void = () => {}
    const wentIdle = new Promise<void>((resolve) => {
      idle = resolve
    })
    let left = 3
    const job: BackgroundJob = {
      name: 'counting',
      idleMs,
      async tick() {
        steps.push(`step ${left}`)
        left -= 1
        if (left < 0) {
          idle()
        }
        return left >= 0
      },
    }
    const work = startBackgroundWork([job], { log: recordingLog() })
    await wentIdle
    await work.stop()
    assert.deepEqual(steps, ['step 3', 'step 2', 'step 1', 'step 0'])
  })

  it('runs a job in as many loops as it asks for', async () => {
    let started = 0
    let allStarted: () => void = () => {}
    const running = new Promise<void>((resolve) => {
      allStarted = resolve
    })
    const job: BackgroundJob = {
      name: 'parallel',
      idleMs,
      loops: 3,
      async tick() {
        started += 1
        if (started === 3) {
          allStarted()
        }
        return false
      },
    }
    const work = startBackgroundWork([job], { log: recordingLog() })
    await running
    await work.stop()
    assert.equal(started, 3)
  })

  it('logs a failed step with the job’s name, unless the failure is a quiet one, and goes on', async () => {
    const log = recordingLog()
    let failuresSeen: () => void = () => {}
    const bothFailed = new Promise<void>((resolve) => {
      failuresSeen = resolve
    })
    let calls = 0
    const job: BackgroundJob = {
      name: 'flaky work',
      idleMs: 0,
      async tick() {
        calls += 1
        if (calls === 1) {
          throw new Error('quiet: the database is away')
        }
        if (calls === 2) {
          throw new Error('loud')
        }
        failuresSeen()
        return false
      },
    }
    // The loops' pauses never keep a process alive (their timers are unref'd): this test does, so
    // the retries after 0 ms are not cut short by an event loop with nothing else to wait for.
    const keepAlive = setInterval(() => {}, 1000)
    const work = startBackgroundWork([job], {
      log,
      isQuiet: (error) => (error as Error).message.startsWith('quiet'),
    })
    await bothFailed
    await work.stop()
    clearInterval(keepAlive)
    assert.deepEqual(log.errors, ['flaky work failed; retrying'])
  })
})
