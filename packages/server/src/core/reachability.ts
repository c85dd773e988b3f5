/**
 * @module Whether a dependency (the database, Redis) answers, as its client last saw it, and who
 * hears when that changes: each change once (lost, with the first error; back), so an outage is
 * logged once when it starts and once when it ends, not once per connection or request.
 */

export type ReachabilityChange =
  | { readonly reachable: false; readonly error: unknown }
  | { readonly reachable: true }

export class ReachabilityTracker {
  reachable = true
  /** Failures seen since start, outage or not; a statement's answer counts only if none came after it began. */
  errors = 0
  readonly #listeners: ((change: ReachabilityChange) => void)[] = []

  onChange(listener: (change: ReachabilityChange) => void): void {
    this.#listeners.push(listener)
  }

  lost(error: unknown): void {
    this.errors += 1
    this.#change({ reachable: false, error })
  }

  /**
   * An answer came. With `since` (the `errors` count when the statement began), an answer to a
   * statement already in flight when a failure was seen says nothing about now: during a restart the
   * connections end one after another, and one answering between two of them is not the end of the
   * outage.
   */
  answered(since?: number): void {
    if (since !== undefined && since !== this.errors) {
      return
    }
    this.#change({ reachable: true })
  }

  #change(change: ReachabilityChange): void {
    if (this.reachable !== change.reachable) {
      this.reachable = change.reachable
      for (const listener of this.#listeners) {
        listener(change)
      }
    }
  }
}
