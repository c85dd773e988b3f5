/**
 * @module Where the rate limits and the key-guessing guard count: stores that implement
 * @fastify/rate-limit's documented store interface (`FastifyRateLimitStore`, plus its `read`). In
 * memory for one process; in Redis (`KEYTURN_REDIS_URL`) for many; and, for `keyturn serve
 * --workers` without Redis, in the cluster primary, which the workers ask over the cluster's IPC
 * channel, so N workers enforce one limit rather than N. Every store counts in fixed windows: the
 * first count of a key opens a window of `timeWindow` ms, the counts within it add up, and the next
 * count after it opens a new one.
 */
import cluster, { type Worker } from 'node:cluster'
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { LruMap } from 'toad-cache'
import { type ReachabilityChange, ReachabilityTracker } from '../core/reachability.js'

export interface Count {
  /** Requests counted in the current window, this one included. */
  readonly current: number
  /** Milliseconds until the window ends. */
  readonly ttl: number
}

type Callback = (error: Error | null, result?: Count) => void

/**
 * @fastify/rate-limit's store contract, with its `read` (the count so far, not counting). One store
 * serves every limit: keys are prefixed by what they count (`ip:`, `key:`, `guess:`, `block:`), so
 * `child` returns the store itself.
 */
export interface CounterStore extends FastifyRateLimitStore {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void
  read(key: string, callback: Callback, timeWindow: number, max: number): void
  child(): CounterStore
}

/** Keys counted at once in one process; the least recently used are forgotten beyond this. */
const memoryCapacity = 100_000

interface Window {
  count: number
  readonly startedAt: number
}

/** One process: an LRU map in memory; answers synchronously. */
export function memoryCounters(): CounterStore {
  const windows = new LruMap<Window>(memoryCapacity)
  const store: CounterStore = {
    incr(key, callback, timeWindow) {
      const now = Date.now()
      let window = windows.get(key)
      if (window === undefined || window.startedAt + timeWindow <= now) {
        window = { count: 1, startedAt: now }
      } else {
        window.count += 1
      }
      windows.set(key, window)
      callback(null, { current: window.count, ttl: timeWindow - (now - window.startedAt) })
    },
    read(key, callback, timeWindow) {
      const now = Date.now()
      const window = windows.get(key)
      callback(
        null,
        window === undefined || window.startedAt + timeWindow <= now
          ? { current: 0, ttl: 0 }
          : { current: window.count, ttl: timeWindow - (now - window.startedAt) },
      )
    },
    child: () => store,
  }
  return store
}

/** INCR, and the window's expiry set by the count that opened it: one atomic step. */
const countScript = `
  local current = redis.call('INCR', KEYS[1])
  if current == 1 then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    return {current, tonumber(ARGV[1])}
  end
  return {current, redis.call('PTTL', KEYS[1])}
`

/** The count so far, without counting; a key without a window reads as 0. */
const readScript = `
  local current = redis.call('GET', KEYS[1])
  if not current then
    return {0, 0}
  end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    ttl = 0
  end
  return {tonumber(current), ttl}
`

type ScriptCallback = (error?: Error | null, result?: unknown) => void

/** The two scripts as ioredis commands (EVALSHA, loaded on first use). */
interface CountingRedis {
  keyturnCount(key: string, timeWindow: number, callback: ScriptCallback): void
  keyturnRead(key: string, callback: ScriptCallback): void
}

/** Counts in Redis, under keys prefixed `keyturn:`. */
function redisStore(redis: Redis): CounterStore {
  redis.defineCommand('keyturnCount', { numberOfKeys: 1, lua: countScript })
  redis.defineCommand('keyturnRead', { numberOfKeys: 1, lua: readScript })
  const commands = redis as unknown as CountingRedis
  const answer =
    (callback: Callback): ScriptCallback =>
    (error, result) => {
      if (error) {
        callback(error)
        return
      }
      const [current, ttl] = result as [number, number]
      callback(null, { current, ttl })
    }
  const store: CounterStore = {
    incr: (key, callback, timeWindow) =>
      commands.keyturnCount(`keyturn:${key}`, timeWindow, answer(callback)),
    read: (key, callback) => commands.keyturnRead(`keyturn:${key}`, answer(callback)),
    child: () => store,
  }
  return store
}

/** Every process that shares this Redis shares the counts (atomic INCR + PEXPIRE in a Lua script). */
export function redisCounters(redis: Redis, health?: RedisHealth): CounterStore {
  const store = redisStore(redis)
  if (health === undefined) {
    return store
  }
  const heard =
    (callback: Callback): Callback =>
    (error, result) => {
      if (error === null) {
        health.answered()
      } else {
        health.lost(error)
      }
      callback(error, result)
    }
  return {
    incr: (key, callback, timeWindow, max) => store.incr(key, heard(callback), timeWindow, max),
    read: (key, callback, timeWindow, max) => store.read(key, heard(callback), timeWindow, max),
    child() {
      return this
    },
  }
}

export type RedisChange = ReachabilityChange

/**
 * Whether Redis answers, as the counts and the connection last saw it: lost when a count fails or
 * the connection closes, back when a count succeeds or the connection is ready again. Each change
 * is heard once (entry/serve.ts logs it: once per outage, not once per request).
 */
export class RedisHealth extends ReachabilityTracker {
  #closing = false

  /** Follows `redis`'s connection events. */
  constructor(redis?: Redis) {
    super()
    redis?.on('ready', () => this.answered())
    redis?.on('error', (error: unknown) => this.lost(error))
    redis?.on('close', () => this.lost(new Error('the connection to Redis closed')))
  }

  /** The server closes the connection itself: not an outage. */
  closing(): void {
    this.#closing = true
  }

  override lost(error: unknown): void {
    if (!this.#closing) {
      super.lost(error)
    }
  }
}

interface CountRequest {
  readonly keyturn: 'count'
  readonly id: number
  readonly op: 'incr' | 'read'
  readonly key: string
  readonly timeWindow: number
  readonly max: number
}

interface CountAnswer {
  readonly keyturn: 'counted'
  readonly id: number
  readonly current: number
  readonly ttl: number
}

/** A worker whose primary does not answer within this counts the request as allowed (and logs). */
const answerTimeoutMs = 2000

/**
 * A `keyturn serve --workers` worker without Redis: each count is one IPC round trip to the primary
 * (`serveCountersToWorkers`), which holds the only counters. Exact: the primary counts every request
 * of every worker in arrival order.
 */
export function workerCounters(): CounterStore & { close(): void } {
  const pending = new Map<number, { callback: Callback; timer: NodeJS.Timeout }>()
  let nextId = 0
  let listening = false
  const onMessage = (message: unknown) => {
    if (!isCountAnswer(message)) {
      return
    }
    const waiting = pending.get(message.id)
    if (waiting !== undefined) {
      pending.delete(message.id)
      clearTimeout(waiting.timer)
      waiting.callback(null, { current: message.current, ttl: message.ttl })
    }
  }
  const ask = (op: CountRequest['op'], key: string, callback: Callback, timeWindow: number, max: number) => {
    const send = process.send?.bind(process)
    if (send === undefined) {
      callback(new Error('workerCounters: this process has no IPC channel to a primary'))
      return
    }
    if (!listening) {
      process.on('message', onMessage)
      listening = true
    }
    nextId = (nextId + 1) % Number.MAX_SAFE_INTEGER
    const id = nextId
    const timer = setTimeout(() => {
      pending.delete(id)
      callback(new Error('the cluster primary did not answer a rate-limit count in time'))
    }, answerTimeoutMs)
    pending.set(id, { callback, timer })
    const request: CountRequest = { keyturn: 'count', id, op, key, timeWindow, max }
    send(request)
  }
  const store = {
    incr: (key: string, callback: Callback, timeWindow: number, max: number) =>
      ask('incr', key, callback, timeWindow, max),
    read: (key: string, callback: Callback, timeWindow: number, max: number) =>
      ask('read', key, callback, timeWindow, max),
    child: () => store,
    close: () => {
      if (listening) {
        process.off('message', onMessage)
        listening = false
      }
      for (const { timer } of pending.values()) {
        clearTimeout(timer)
      }
      pending.clear()
    },
  }
  return store
}

/**
 * The primary of `keyturn serve --workers` (without Redis): answers the workers' counts from one
 * in-memory store. Returns the function that stops answering.
 */
export function serveCountersToWorkers(): () => void {
  const store = memoryCounters()
  const onMessage = (worker: Worker, message: unknown) => {
    if (!isCountRequest(message)) {
      return
    }
    store[message.op](
      message.key,
      (error, result) => {
        // The memory store never fails; answer a zero count rather than leave the worker waiting.
        const answer: CountAnswer = {
          keyturn: 'counted',
          id: message.id,
          current: error === null ? (result?.current ?? 0) : 0,
          ttl: error === null ? (result?.ttl ?? 0) : 0,
        }
        if (worker.isConnected()) {
          worker.send(answer)
        }
      },
      message.timeWindow,
      message.max,
    )
  }
  cluster.on('message', onMessage)
  return () => {
    cluster.off('message', onMessage)
  }
}

function isCountRequest(message: unknown): message is CountRequest {
  const candidate = message as Partial<CountRequest> | null
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.keyturn === 'count' &&
    typeof candidate.id === 'number' &&
    (candidate.op === 'incr' || candidate.op === 'read') &&
    typeof candidate.key === 'string' &&
    typeof candidate.timeWindow === 'number' &&
    typeof candidate.max === 'number'
  )
}

function isCountAnswer(message: unknown): message is CountAnswer {
  const candidate = message as Partial<CountAnswer> | null
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.keyturn === 'counted' &&
    typeof candidate.id === 'number' &&
    typeof candidate.current === 'number' &&
    typeof candidate.ttl === 'number'
  )
}
