/**
 * Statements shared by the requests that arrive together (issue 14). Each `run` resolves once the
 * statement that carried its item has finished (for a write: committed), with that item's answer;
 * the items that arrive while a statement is under way share the next one, so a burst of N pays for
 * a few statements, not N. An item that fails fails alone: a failed group runs again one item at a
 * time, and each caller hears its own item's outcome (a constraint it broke, or its answer).
 *
 * A write shared this way is group commit: several requests acknowledged by one commit, none before
 * it. A read shared this way reads after every request in it arrived, so it sees every change
 * acknowledged before any of them.
 *
 * Used for the events that go with no change of state (storage/event-group.ts), and on PostgreSQL
 * for license creates and license reads (licenses/kysely-license-statement-groups.ts).
 */
export class StatementGroup<Item, Answer = void> {
  readonly #run: (items: readonly Item[]) => Promise<readonly Answer[]>
  readonly #maxItems: number
  readonly #waiting: { readonly item: Item; readonly done: (error: unknown, answer?: Answer) => void }[] = []
  #isFlushing = false

  /**
   * `run` runs its items in one statement (or one transaction), at most `maxItems` at once, and
   * answers with each item's answer in the items' order (a write without answers: none).
   */
  constructor(run: (items: readonly Item[]) => Promise<readonly Answer[]>, maxItems: number) {
    this.#run = run
    this.#maxItems = maxItems
  }

  run(item: Item): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({
        item,
        done: (error, answer) => (error === undefined ? resolve(answer as Answer) : reject(error)),
      })
      if (!this.#isFlushing) {
        void this.#flush()
      }
    })
  }

  async #flush(): Promise<void> {
    this.#isFlushing = true
    try {
      while (this.#waiting.length > 0) {
        // Let the requests under way reach their statement first (better-sqlite3 blocks the thread
        // while it commits): the group grows instead of running the first arrival alone.
        await new Promise((resolve) => setImmediate(resolve))
        const group = this.#waiting.splice(0, this.#maxItems)
        try {
          const answers = await this.#run(group.map((waiting) => waiting.item))
          for (const [index, waiting] of group.entries()) {
            waiting.done(undefined, answers[index])
          }
        } catch (error) {
          if (group.length === 1) {
            group[0]?.done(error)
            continue
          }
          for (const waiting of group) {
            await this.#run([waiting.item]).then(
              ([answer]) => waiting.done(undefined, answer),
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
