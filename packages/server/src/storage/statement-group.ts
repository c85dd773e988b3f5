/**
 * Group commit of writes that can share one statement (issue 14, "several concurrent requests
 * acknowledged by one commit, none acknowledged before it"): each `run` resolves once the statement
 * that wrote its item has committed, and the items that arrive while a statement is under way share
 * the next one, so a burst of N pays for a few statements, not N. An item that cannot be written
 * fails alone: a failed group is written again one item at a time, and each caller hears its own
 * item's outcome (a constraint it broke, or nothing).
 *
 * Used for the events that go with no change of state (storage/event-group.ts) and for license
 * creates on PostgreSQL (licenses/kysely-license-store.ts, LicenseInsertGroup).
 */
export class StatementGroup<Item> {
  readonly #write: (items: readonly Item[]) => Promise<void>
  readonly #maxItems: number
  readonly #waiting: { readonly item: Item; readonly done: (error?: unknown) => void }[] = []
  #isFlushing = false

  /** `write` writes its items in one statement (or one transaction); at most `maxItems` at once. */
  constructor(write: (items: readonly Item[]) => Promise<void>, maxItems: number) {
    this.#write = write
    this.#maxItems = maxItems
  }

  run(item: Item): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, done: (error) => (error === undefined ? resolve() : reject(error)) })
      if (!this.#isFlushing) {
        void this.#flush()
      }
    })
  }

  async #flush(): Promise<void> {
    this.#isFlushing = true
    try {
      while (this.#waiting.length > 0) {
        // Let the requests under way reach their write first (better-sqlite3 blocks the thread while
        // it commits): the group grows instead of writing the first arrival alone.
        await new Promise((resolve) => setImmediate(resolve))
        const group = this.#waiting.splice(0, this.#maxItems)
        try {
          await this.#write(group.map((waiting) => waiting.item))
          for (const waiting of group) {
            waiting.done()
          }
        } catch (error) {
          if (group.length === 1) {
            group[0]?.done(error)
            continue
          }
          for (const waiting of group) {
            await this.#write([waiting.item]).then(
              () => waiting.done(),
              (single: unknown) => waiting.done(single),
            )
          }
        }
      }
    } finally {
      this.#isFlushing = false
    }
  }
}
