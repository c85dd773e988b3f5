import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StatementGroup } from './statement-group.js'

/** A statement that doubles its items once `finish` is called, logging what it was sent. */
function statements(log: string[], refuse?: number) {
  const running: (() => void)[] = []
  const run = (items: readonly number[]) => {
    log.push(`sent ${items.join(',')}`)
    return new Promise<number[]>((resolve, reject) => {
      running.push(() =>
        items.includes(refuse ?? Number.NaN)
          ? reject(new Error(`refused ${refuse}`))
          : resolve(items.map((item) => item * 2)),
      )
    })
  }
  const finishOne = async () => {
    while (running.length === 0) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    running.shift()?.()
  }
  return { run, finishOne }
}

async function burst(overlap: boolean) {
  const log: string[] = []
  const { run, finishOne } = statements(log)
  const group = new StatementGroup(run, 64, { overlap })
  const answer = (item: number) => group.run(item).then((doubled) => log.push(`answered ${item}: ${doubled}`))
  const first = [answer(1), answer(2)]
  await new Promise((resolve) => setImmediate(resolve))
  const second = [answer(3), answer(4)] // arrive while the first statement runs
  await finishOne()
  await finishOne()
  await Promise.all([...first, ...second])
  return log
}

describe('StatementGroup', () => {
  it('shares one statement among the items that arrive together, answering each its own', async () => {
    assert.deepEqual(await burst(false), [
      'sent 1,2',
      'answered 1: 2',
      'answered 2: 4',
      'sent 3,4',
      'answered 3: 6',
      'answered 4: 8',
    ])
  })

  it('with overlap, sends the next statement before answering the finished one', async () => {
    assert.deepEqual(await burst(true), [
      'sent 1,2',
      'sent 3,4',
      'answered 1: 2',
      'answered 2: 4',
      'answered 3: 6',
      'answered 4: 8',
    ])
  })

  it('runs a failed group again one item at a time, so only the refused item fails', async () => {
    const log: string[] = []
    const { run, finishOne } = statements(log, 2)
    const group = new StatementGroup(run, 64, { overlap: true })
    const outcomes = Promise.allSettled([1, 2, 3].map((item) => group.run(item)))
    for (let n = 0; n < 4; n++) {
      await finishOne()
    }
    assert.deepEqual(
      (await outcomes).map((outcome) =>
        outcome.status === 'fulfilled' ? outcome.value : String(outcome.reason),
      ),
      [2, 'Error: refused 2', 6],
    )
    assert.deepEqual(log, ['sent 1,2,3', 'sent 1', 'sent 2', 'sent 3'])
  })
})
