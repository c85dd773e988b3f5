import { type Command, Option } from 'commander'
import type { Io } from '../io.js'

/** `keyturn operators create`: an invited operator account, made in the database directly. */
export function registerOperators(program: Command, io: Io): void {
  const operators = program
    .command('operators')
    .description('Operator accounts (people who sign in to the dashboard)')
  operators
    .command('create')
    .description('Create an operator in the database and print their one-time invitation link')
    .requiredOption('--email <email>', 'their email address')
    .option('--name <name>', 'their name (default: the email)')
    .addOption(
      new Option('--role <role>', 'what they may do')
        .choices(['owner', 'admin', 'support', 'viewer'])
        .default('viewer'),
    )
    .option('--database-url <url>', 'sqlite:<path> or postgres://… (KEYTURN_DATABASE_URL)')
    .addHelpText(
      'after',
      '\nExample (the way back in when no owner can sign in):\n  keyturn operators create --email ada@example.com --role owner',
    )
    .action(
      async (options: {
        email: string
        name?: string
        role: 'owner' | 'admin' | 'support' | 'viewer'
        databaseUrl?: string
      }) => {
        const { createOperator } = await import('@keyturn/server')
        const env = {
          ...io.env,
          ...(options.databaseUrl === undefined ? {} : { KEYTURN_DATABASE_URL: options.databaseUrl }),
        }
        await createOperator(
          env,
          { email: options.email, name: options.name ?? options.email, role: options.role },
          { print: io.print },
        )
      },
    )
}
