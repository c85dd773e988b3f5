import type { Kysely } from 'kysely'
import type { Clock } from '../core/clock.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import type { KyselyMailOutbox } from '../mail/kysely-mail-outbox.js'
import type { Database } from '../storage/database.js'
import type { EventGroup } from '../storage/event-group.js'
import { KyselyUnitOfWork } from '../storage/kysely-unit-of-work.js'
import { KyselyOperatorStore } from './kysely-operator-store.js'
import type { OperatorStores } from './operator-store.js'

/**
 * The operators' unit of work over `db`. Without an outbox (the command line, which prints its
 * links) nothing can be mailed: the service queues mail only when it has templates.
 */
export function operatorStorage(deps: {
  readonly db: Kysely<Database>
  readonly clock: Clock
  readonly outbox?: KyselyMailOutbox
  readonly group?: EventGroup
}): UnitOfWork<OperatorStores> {
  return new KyselyUnitOfWork({
    db: deps.db,
    clock: deps.clock,
    ...(deps.group === undefined ? {} : { group: deps.group }),
    stores: (trx) => ({
      operators: new KyselyOperatorStore(trx),
      mail: {
        async queue(mail, now) {
          if (deps.outbox === undefined) {
            throw new Error('No mail outbox here: an operator mail cannot be queued.')
          }
          await deps.outbox.enqueue(trx, { ...mail, productId: null, customerId: null }, now)
        },
      },
    }),
  })
}
