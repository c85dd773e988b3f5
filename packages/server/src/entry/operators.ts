import { loadConfig } from '../config.js'
import { systemClock } from '../core/clock.js'
import { dashboardPath } from '../http/dashboard.js'
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
export async function createOperator(
  env: Environment,
  input: { email: string; name: string; role: OperatorRole },
  output: Output,
): Promise<void> {
  const config = loadConfig(env)
  const connection = connect(config.database)
  try {
    await migrateToLatest(connection)
    const operators = new OperatorService({
      store: new KyselyOperatorStore(connection.db),
      sessions: new SessionService({ store: new KyselySessionStore(connection.db), clock: systemClock }),
      clock: systemClock,
    })
    const { operator, invitationToken } = await operators.create(input)
    const base = config.publicUrl ?? `http://${config.host}:${config.port}`
    output.print(`Created ${operator.role} ${operator.email} (${operator.id}), invited.`)
    output.print(`One-time link to choose a password (works once, for 7 days; shown only now):`)
    output.print(`  ${base}${dashboardPath}/invitation#${invitationToken}`)
  } finally {
    await connection.close()
  }
}
