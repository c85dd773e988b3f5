import { databaseFaultOf } from './database-faults.js'

/** How a group's statement ended. */
type Outcome<Answer> = { readonly answers: readonly Answer[] } | { readonly error: unknown }
interface Waiting<Item, Answer> {
  readonly item: Item
  readonly done: (error: unknown, answer?: Answer) => void
}

/**
 * Statements shared by the requests that arrive together (docs/decisions/0027-postgresql-shared-statements.md). Each `run` resolves once the
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
 * for license creates and reads (licenses/kysely-license-statement-groups.ts) and for activations'
 * renewals and new machines (activations/kysely-activation-statement-groups.ts).
 */
export class StatementGroup<Item, Answer = void> {
  readonly #run: (items: readonly Item[]) => Promise<readonly Answer[]>
  readonly #maxItems: number
  readonly #overlap: boolean
  readonly #waiting: Waiting<Item, Answer>[] = []
  #isFlushing = false

  /**
   * `run` runs its items in one statement (or one transaction), at most `maxItems` at once, and
   * answers with each item's answer in the items' order (a write without answers: none).
   *
   * `overlap` (PostgreSQL): when a statement has finished, the next one (for the requests that
   * arrived meanwhile) is sent before this one's requests are answered, so the database runs it
   * while this process answers; still one statement in flight at a time. Fast path: the
   * server sat idle while PostgreSQL ran the next read, sent only once the previous ~24 answers
   * were written (docs/decisions/0031-one-store-two-engines.md). Not on SQLite, whose statements block the thread.
   */
  constructor(
    run: (items: readonly Item[]) => Promise<readonly Answer[]>,
    maxItems: number,
    options: { readonly overlap?: boolean } = {},
  ) {
    this.#run = run
    this.#maxItems = maxItems
    this.#overlap = options.overlap ?? false
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
      let next: { group: Waiting<Item, Answer>[]; outcome: Promise<Outcome<Answer>> } | undefined
      while (next !== undefined || this.#waiting.length > 0) {
        if (next === undefined) {
          // Let the requests under way reach their statement first (better-sqlite3 blocks the thread
          // while it commits): the group grows instead of running the first arrival alone.
          await new Promise((resolve) => setImmediate(resolve))
          next = this.#start()
        }
        const { group, outcome } = next
        const finished = await outcome
        next = undefined
        if ('error' in finished) {
          await this.#runEachAlone(group, finished.error)
          continue
        }
        if (this.#overlap && this.#waiting.length > 0) {
          next = this.#start()
        }
        for (const [index, waiting] of group.entries()) {
          waiting.done(undefined, finished.answers[index])
        }
      }
    } finally {
      this.#isFlushing = false
    }
  }

  /** Sends the statement of the next waiting items. */
  #start() {
    const group = this.#waiting.splice(0, this.#maxItems)
    const outcome = this.#run(group.map((waiting) => waiting.item)).then(
      (answers): Outcome<Answer> => ({ answers }),
      (error: unknown): Outcome<Answer> => ({ error }),
    )
    return { group, outcome }
  }

  /**
   * A failed group: each item runs again alone, and its caller hears its own outcome; unless the
   * database itself failed (unreachable, timed out, full), which no item caused: then every caller
   * hears it at once rather than one timeout after another.
   */
  async #runEachAlone(group: Waiting<Item, Answer>[], error: unknown): Promise<void> {
    if (group.length === 1 || databaseFaultOf(error) !== undefined) {
      for (const waiting of group) {
        waiting.done(error)
      }
      return
    }
    for (const waiting of group) {
      await this.#run([waiting.item]).then(
        ([answer]) => waiting.done(undefined, answer),
        (single: unknown) => waiting.done(single),
      )
    }
  }
}
