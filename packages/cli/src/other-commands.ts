import type { Command } from 'commander'
import { registerActivations } from './commands/activations.js'
import { registerApiKeys } from './commands/api-keys.js'
import { registerBackup } from './commands/backup.js'
import { registerCustomers } from './commands/customers.js'
import { registerEntitlements } from './commands/entitlements.js'
import { registerEvents } from './commands/events.js'
import { registerImport } from './commands/import.js'
import { registerIntegrations } from './commands/integrations.js'
import { registerLicenses } from './commands/licenses.js'
import { registerMigrate } from './commands/migrate.js'
import { registerOffline } from './commands/offline.js'
import { registerOperators } from './commands/operators.js'
import { registerPolicies } from './commands/policies.js'
import { registerProducts } from './commands/products.js'
import { registerSearch } from './commands/search.js'
import { registerStats } from './commands/stats.js'
import { registerToken } from './commands/token.js'
import { registerWebhooks } from './commands/webhooks.js'
import type { Io } from './io.js'

/** Every command but `serve`, in the order `keyturn --help` lists them (run.ts loads these lazily). */
export function registerOtherCommands(program: Command, io: Io): void {
  registerMigrate(program, io)
  registerBackup(program, io)
  registerOperators(program, io)
  registerProducts(program, io)
  registerApiKeys(program, io)
  registerLicenses(program, io)
  registerActivations(program, io)
  registerOffline(program, io)
  registerCustomers(program, io)
  registerSearch(program, io)
  registerStats(program, io)
  registerEntitlements(program, io)
  registerPolicies(program, io)
  registerToken(program, io)
  registerEvents(program, io)
  registerWebhooks(program, io)
  registerIntegrations(program, io)
  registerImport(program, io)
}
