/**
 * @module Where the rate limits and the key-guessing guard count: @fastify/rate-limit's stores. In
 * memory for one process; in Redis (`KEYTURN_REDIS_URL`) for many; and, for `keyturn serve
 * --workers` without Redis, in the cluster primary, which the workers ask over the cluster's IPC
 * channel, so N workers enforce one limit rather than N.
 */
import cluster, { type Worker } from 'node:cluster'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { Redis } from 'ioredis'

export interface Count {
  /** Requests counted in the current window, this one included. */
  readonly current: number
  /** Milliseconds until the window ends. */
  readonly ttl: number
}

type Callback = (error: Error | null, result?: Count) => void

/** @fastify/rate-limit's store contract (its LocalStore and RedisStore fulfil it). */
export interface CounterStore {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void
  read(key: string, callback: Callback, timeWindow: number, max: number): void
  child(options: unknown): CounterStore
}

/** Keys counted at once in one process; the least recently used are forgotten beyond this. */
const memoryCapacity = 100_000

/** Keys are prefixed by what they count (`ip:`, `key:`, `guess:`, `block:`): one store serves all. */
class SharedStore implements CounterStore {
  readonly #inner: CounterStore
  constructor(inner: CounterStore) {
    this.#inner = inner
  }
  incr(key: string, callback: Callback, timeWindow: number, max: number): void {
    this.#inner.incr(key, callback, timeWindow, max)
  }
  read(key: string, callback: Callback, timeWindow: number, max: number): void {
    this.#inner.read(key, callback, timeWindow, max)
  }
  child(): CounterStore {
    return this
  }
}

/** One process: an LRU map in memory. */
export function memoryCounters(): CounterStore {
  return new SharedStore(new LocalStore(false, false, memoryCapacity))
}

/** Every process that shares this Redis shares the counts (atomic INCR + PEXPIRE in a Lua script). */
export function redisCounters(redis: Redis, health?: RedisHealth): CounterStore {
  const store = new SharedStore(new RedisStore(false, false, redis, 'keyturn:'))
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

export type RedisChange =
  | { readonly reachable: false; readonly error: unknown }
  | { readonly reachable: true }

/**
 * Whether Redis answers, as the counts and the connection last saw it: lost when a count fails or
 * the connection closes, back when a count succeeds or the connection is ready again. Each change
 * is heard once (main.ts logs it: once per outage, not once per request).
 */
export class RedisHealth {
  reachable = true
  readonly #listeners: ((change: RedisChange) => void)[] = []
  #closing = false

  /** Follows `redis`'s connection events. */
  constructor(redis?: Redis) {
    redis?.on('ready', () => this.answered())
    redis?.on('error', (error: unknown) => this.lost(error))
    redis?.on('close', () => this.lost(new Error('the connection to Redis closed')))
  }

  onChange(listener: (change: RedisChange) => void): void {
    this.#listeners.push(listener)
  }

  /** The server closes the connection itself: not an outage. */
  closing(): void {
    this.#closing = true
  }

  lost(error: unknown): void {
    if (this.reachable && !this.#closing) {
      this.reachable = false
      for (const listener of this.#listeners) {
        listener({ reachable: false, error })
      }
    }
  }

  answered(): void {
    if (!this.reachable) {
      this.reachable = true
      for (const listener of this.#listeners) {
        listener({ reachable: true })
      }
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
        // LocalStore never fails; answer a zero count rather than leave the worker waiting.
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
