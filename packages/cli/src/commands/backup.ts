import type { Command } from 'commander'
import type { Io } from '../io.js'

/** `keyturn backup` and `keyturn restore`: a SQLite database's copy, taken while the server serves. */
export function registerBackup(program: Command, io: Io): void {
  program
    .command('backup')
    .description('Copy the SQLite database consistently into a new file, while Keyturn keeps serving')
    .requiredOption('--out <file>', 'the backup file to create (never overwritten)')
    .option('--database-url <url>', 'sqlite:<path> (KEYTURN_DATABASE_URL)')
    .addHelpText(
      'after',
      '\nThe master secret (keyturn.secret beside the database, or KEYTURN_SECRET) is not in the copy: keep it\n' +
        'safe separately. PostgreSQL: use pg_dump (docs/operations/backups.md).\n\n' +
        'Example:\n  KEYTURN_DATABASE_URL=sqlite:/var/lib/keyturn/keyturn.db keyturn backup --out /backups/keyturn-$(date +%F).db',
    )
    .action(async (options: { out: string; databaseUrl?: string }) => {
      const { backup } = await import('@keyturn/server')
      await backup(withDatabaseUrl(io, options.databaseUrl), options.out, { print: io.print })
    })

  program
    .command('restore')
    .description('Put a backup in place as the SQLite database; only where there is no database yet')
    .argument('<file>', 'a file written by keyturn backup')
    .option('--database-url <url>', 'sqlite:<path>, where the database is to be (KEYTURN_DATABASE_URL)')
    .addHelpText(
      'after',
      '\nStop Keyturn and move the current database away first: restore never overwrites one.\n\n' +
        'Example:\n  KEYTURN_DATABASE_URL=sqlite:/var/lib/keyturn/keyturn.db keyturn restore /backups/keyturn-2031-01-01.db',
    )
    .action(async (file: string, options: { databaseUrl?: string }) => {
      const { restore } = await import('@keyturn/server')
      await restore(withDatabaseUrl(io, options.databaseUrl), file, { print: io.print })
    })
}

function withDatabaseUrl(io: Io, databaseUrl: string | undefined) {
  return { ...io.env, ...(databaseUrl === undefined ? {} : { KEYTURN_DATABASE_URL: databaseUrl }) }
}
