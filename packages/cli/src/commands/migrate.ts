import type { Command } from 'commander'
import type { Io } from '../io.js'

/** `keyturn migrate`: applies pending database migrations (the server also does on start). */
export function registerMigrate(program: Command, io: Io): void {
  program
    .command('migrate')
    .description('Apply pending database migrations')
    .option('--database-url <url>', 'sqlite:<path> or postgres://… (KEYTURN_DATABASE_URL)')
    .addHelpText('after', '\nExample:\n  KEYTURN_DATABASE_URL=postgres://keyturn@db/keyturn keyturn migrate')
    .action(async (options: { databaseUrl?: string }) => {
      const { migrate } = await import('@keyturn/server')
      const env = {
        ...io.env,
        ...(options.databaseUrl === undefined ? {} : { KEYTURN_DATABASE_URL: options.databaseUrl }),
      }
      await migrate(env, { print: io.print })
    })
}
