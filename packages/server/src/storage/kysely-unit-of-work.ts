import type { EventType, ProductId } from '@keyturn/protocol'
import type { Kysely } from 'kysely'
import type { Clock } from '../core/clock.js'
import { newEventId } from '../core/ids.js'
import type {
  Actor,
  ChangeActor,
  Event,
  EventRecorder,
  StatementEvents,
  UnitOfWork,
} from '../core/unit-of-work.js'
import type { Database } from './database.js'
import { databaseFaultOf } from './database-faults.js'
import { EventGroup } from './event-group.js'
import { KyselyEventWriter } from './event-writer.js'
import { isSqlite, writeTransaction } from './write-transaction.js'

/**
 * Decides, per event, whether it is written at all: validation outcomes are recorded only when
 * someone wants them (docs/decisions/0012-events-and-unit-of-work.md), so the hot path pays nothing by default.
 */
export interface EventFilter {
  wants(type: EventType): boolean
}

export const recordEveryEvent: EventFilter = { wants: () => true }

/** `stores(trx)` builds the service's stores on the transaction. */
export class KyselyUnitOfWork<Stores> implements UnitOfWork<Stores> {
  readonly #db: Kysely<Database>
  readonly #stores: (trx: Kysely<Database>) => Stores
  readonly #clock: Clock
  readonly #filter: EventFilter
  readonly #group: EventGroup

  constructor(deps: {
    readonly db: Kysely<Database>
    readonly stores: (trx: Kysely<Database>) => Stores
    readonly clock: Clock
    readonly filter?: EventFilter
    /** Shared by the units of work of one app, so their lone events commit together. */
    readonly group?: EventGroup
  }) {
    this.#db = deps.db
    this.#stores = deps.stores
    this.#clock = deps.clock
    this.#filter = deps.filter ?? recordEveryEvent
    this.#group = deps.group ?? new EventGroup(deps.db)
  }

  async recordAlone(
    by: ChangeActor,
    type: EventType,
    productId: ProductId | null,
    data: object,
  ): Promise<void> {
    if (this.#filter.wants(type)) {
      await this.#group.write(this.#event(by, type, productId, data))
    }
  }

  async recordUnlessFull(
    by: ChangeActor,
    type: EventType,
    productId: ProductId | null,
    data: object,
  ): Promise<boolean> {
    try {
      await this.recordAlone(by, type, productId, data)
      return true
    } catch (error) {
      if (databaseFaultOf(error) === 'storage_full') {
        return false
      }
      throw error
    }
  }

  #event(by: ChangeActor, type: EventType, productId: ProductId | null, data: object): Event {
    const occurredAt = this.#clock.now()
    return {
      id: newEventId(occurredAt),
      type,
      occurredAt,
      productId,
      actor: actorOf(by),
      requestId: 'requestId' in by ? (by.requestId ?? null) : null,
      data: data as Record<string, unknown>, // a resource object; serialised at commit
    }
  }

  write<T>(
    by: ChangeActor,
    work: (tx: Stores & { readonly events: EventRecorder }) => Promise<T>,
  ): Promise<T> {
    return this.#inTransaction(by, work)
  }

  async writeOne<T>(
    by: ChangeActor,
    work: (tx: Stores & { readonly events: StatementEvents }) => Promise<T>,
  ): Promise<T> {
    if (isSqlite(this.#db)) {
      return this.#inTransaction(by, work)
    }
    const events = this.#recorder(by)
    const result = await work({ ...this.#stores(this.#db), events })
    if (events.take().length > 0) {
      throw new Error('writeOne: an event was recorded that no statement wrote, outside any transaction')
    }
    return result
  }

  /** The events the store's statements did not take are written last, before the commit. */
  async #inTransaction<T>(
    by: ChangeActor,
    work: (tx: Stores & { readonly events: StatementEvents }) => Promise<T>,
  ): Promise<T> {
    return writeTransaction(this.#db, async (trx) => {
      const events = this.#recorder(by)
      const result = await work({ ...this.#stores(trx), events })
      await new KyselyEventWriter(trx).insert(events.take())
      return result
    })
  }

  #recorder(by: ChangeActor): StatementEvents {
    let recorded: Event[] = []
    return {
      record: (type: EventType, productId: ProductId | null, data: object) => {
        if (this.#filter.wants(type)) {
          recorded.push(this.#event(by, type, productId, data))
        }
      },
      take: () => {
        const taken = recorded
        recorded = []
        return taken
      },
    }
  }
}

function actorOf(by: ChangeActor): Actor {
  if ('operator' in by && by.operator !== undefined) {
    return { type: 'operator', id: by.operator.id }
  }
  if ('apiKeyId' in by && by.apiKeyId !== undefined) {
    return { type: 'apiKey', id: by.apiKeyId, role: by.role }
  }
  return { type: by.type, id: by.id } as Actor // a customer, an integration or a part of the server, as given
}
