/**
 * What the round-based tools share (interleaved.mjs, builds.mjs, run.mjs's paired rounds): one
 * autocannon round with the server's CPU per response, and the median over rounds.
 */
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'

/** utime + stime in clock ticks (1/100 s) of /proc/<path>/stat. */
function ticks(path) {
  const stat = readFileSync(`/proc/${path}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/** CPU ticks of the processes: every thread, and their main threads (event loops). */
function cpuOf(pids) {
  const sum = (paths) => paths.reduce((total, path) => total + ticks(path), 0)
  return { process: sum(pids.map(String)), main: sum(pids.map((pid) => `${pid}/task/${pid}`)) }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/**
 * One round of `load` (a scenario's prepared requests, picked at random) against `url` for
 * `seconds`; CPU is counted over `pids()` (the server, or the server and its workers).
 */
export async function measureRound({ url, pids, load, connections, seconds, adminKey, timeout }) {
  const items = load.requests
  const before = cpuOf(pids())
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    ...(timeout === undefined ? {} : { timeout }),
    method: load.method,
    headers: {
      ...(adminKey === undefined ? {} : { authorization: `Bearer ${adminKey}` }),
      'content-type': 'application/json',
      ...load.headers,
    },
    requests: [
      {
        setupRequest(request) {
          const item = items[Math.floor(Math.random() * items.length)]
          request.path = item.path
          if (item.body !== undefined) {
            request.body = JSON.stringify(item.body)
          }
          return request
        },
      },
    ],
  })
  const after = cpuOf(pids())
  const responses = result.requests.total
  return {
    rps: responses / seconds,
    processUs: ((after.process - before.process) * 10_000) / responses,
    mainUs: ((after.main - before.main) * 10_000) / responses,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
  }
}

/**
 * The rounds of an interleaved comparison: each contender once for 1 s to warm up (JIT, caches; not
 * counted), then `rounds` rounds in which the contenders take turns, the order reversed every other
 * round so that none always follows another. `measure(contender, seconds)` runs one round,
 * `idle(contender)` waits until its server has settled. Returns each contender's rounds by name;
 * a round with an answer that is not 2xx stops the comparison.
 */
export async function interleavedRounds(contenders, { rounds, seconds, measure, idle }) {
  for (const contender of contenders) {
    await measure(contender, 1)
    await idle(contender)
  }
  const rows = new Map(contenders.map(({ name }) => [name, []]))
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? contenders : [...contenders].reverse()
    for (const contender of order) {
      const measured = await measure(contender, seconds)
      if (measured.non2xx > 0) {
        throw new Error(`${contender.name}: ${measured.non2xx} answers were not 2xx`)
      }
      rows.get(contender.name).push(measured)
      await idle(contender)
    }
  }
  return rows
}
