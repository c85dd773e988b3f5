// @fastify/rate-limit ships its stores without type declarations; these are the parts protection/ uses.
declare module '@fastify/rate-limit/store/LocalStore.js' {
  import type { CounterStore } from './counters.js'

  const LocalStore: new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    cache?: number,
  ) => CounterStore
  export = LocalStore
}
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { Redis } from 'ioredis'
  import type { CounterStore } from './counters.js'

  const RedisStore: new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    redis: Redis,
    prefix?: string,
  ) => CounterStore
  export = RedisStore
}
