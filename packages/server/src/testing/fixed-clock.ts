import type { Clock } from '../core/clock.js'

/** A clock for tests: stands still until moved. */
export class FixedClock implements Clock {
  #now: Date
  constructor(iso = '2030-01-01T00:00:00.000Z') {
    this.#now = new Date(iso)
  }
  now(): Date {
    return new Date(this.#now)
  }
  set(iso: string): void {
    this.#now = new Date(iso)
  }
  advance(milliseconds: number): void {
    this.#now = new Date(this.#now.getTime() + milliseconds)
  }
}
