import { loadConfig } from '../config.js'
import { systemClock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { systemActor } from '../core/unit-of-work.js'
import { operatorStorage } from '../operators/kysely-operator-storage.js'
import { KyselyOperatorStore } from '../operators/kysely-operator-store.js'
import type { OperatorRole } from '../operators/operator.js'
import { OperatorService } from '../operators/operator-service.js'
import { KyselySessionStore } from '../sessions/kysely-session-store.js'
import { SessionService } from '../sessions/session-service.js'
import { connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'
import type { Environment, Output } from './common.js'

/**
 * Creates an invited operator straight in the database (the way back in when no owner can sign in)
 * and prints the one-time link where they choose a password. The link is shown only now.
 */
/** The operator service over the configured database (migrated first), for one command. */
async function withOperators<T>(
  env: Environment,
  run: (operators: OperatorService, publicBase: string) => Promise<T>,
): Promise<T> {
  const config = loadConfig(env)
  const connection = connect(config.database)
  try {
    await migrateToLatest(connection)
    const operators = new OperatorService({
      store: new KyselyOperatorStore(connection.db),
      storage: operatorStorage({ db: connection.db, clock: systemClock }),
      sessions: new SessionService({ store: new KyselySessionStore(connection.db), clock: systemClock }),
      clock: systemClock,
    })
    return await run(operators, config.publicUrl ?? `http://${config.host}:${config.port}`)
  } finally {
    await connection.close()
  }
}

export async function createOperator(
  env: Environment,
  input: { email: string; name: string; role: OperatorRole },
  output: Output,
): Promise<void> {
  await withOperators(env, async (operators, base) => {
    const { operator, invitation } = await operators.create(systemActor('keyturn'), input, base)
    output.print(`Created ${operator.role} ${operator.email} (${operator.id}), invited.`)
    output.print(`One-time link to choose a password (works once, for 7 days; shown only now):`)
    output.print(`  ${invitation?.url ?? ''}`)
  })
}

/** Prints every operator account: id, email, role, status, name. */
export async function listOperators(env: Environment, output: Output): Promise<void> {
  await withOperators(env, async (operators) => {
    const all = await operators.list()
    const rows = [
      ['ID', 'EMAIL', 'ROLE', 'STATUS', 'NAME'],
      ...all.map((o) => [o.id, o.email, o.role, o.status, o.name]),
    ]
    const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? []
    for (const row of rows) {
      output.print(
        row
          .map((cell, column) => cell.padEnd(widths[column] ?? 0))
          .join('  ')
          .trimEnd(),
      )
    }
  })
}

/**
 * Changes an operator's role or disables/enables it (by id or email), in the database directly; a
 * change ends the operator's sessions. The last active owner can be neither demoted nor disabled.
 */
export async function updateOperator(
  env: Environment,
  idOrEmail: string,
  changes: { role?: OperatorRole; status?: 'active' | 'disabled' },
  output: Output,
): Promise<void> {
  await withOperators(env, async (operators) => {
    const found = (await operators.list()).find(
      (o) => o.id === idOrEmail || o.email.toLowerCase() === idOrEmail.toLowerCase(),
    )
    if (found === undefined) {
      throw new DomainError('operator_not_found', `No operator ${idOrEmail} exists.`)
    }
    const operator = await operators.update(systemActor('keyturn'), found.id, changes)
    output.print(`${operator.email} (${operator.id}): ${operator.role}, ${operator.status}.`)
  })
}
