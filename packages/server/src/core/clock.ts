/** The only source of time for domain code, so tests can pin it. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = {
  now: () => new Date(),
}
