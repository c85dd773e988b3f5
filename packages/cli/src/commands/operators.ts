import { type Command, Option } from 'commander'
import type { Io } from '../io.js'

/**
 * `keyturn operators create|list|update`: operator accounts, in the database directly (like
 * migrate and backup: the way back in when no owner can sign in).
 */
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
  operators
    .command('list')
    .description('List the operator accounts: id, email, role, status, name')
    .option('--database-url <url>', 'sqlite:<path> or postgres://… (KEYTURN_DATABASE_URL)')
    .action(async (options: { databaseUrl?: string }) => {
      const { listOperators } = await import('@keyturn/server')
      await listOperators(withDatabase(io, options.databaseUrl), { print: io.print })
    })
  operators
    .command('update')
    .description("Change an operator's role, or disable or enable it (ends its sessions)")
    .argument('<operator>', 'the operator’s id or email')
    .addOption(new Option('--role <role>', 'the new role').choices(['owner', 'admin', 'support', 'viewer']))
    .addOption(new Option('--disable', 'refuse its sign-ins and end its sessions').conflicts('enable'))
    .option('--enable', 'allow its sign-ins again')
    .option('--database-url <url>', 'sqlite:<path> or postgres://… (KEYTURN_DATABASE_URL)')
    .addHelpText('after', '\nExample:\n  keyturn operators update ada@example.com --role admin')
    .action(
      async (
        operator: string,
        options: {
          role?: 'owner' | 'admin' | 'support' | 'viewer'
          disable?: boolean
          enable?: boolean
          databaseUrl?: string
        },
        command: Command,
      ) => {
        if (options.role === undefined && options.disable !== true && options.enable !== true) {
          command.error('error: give --role, --disable or --enable', { exitCode: 2 })
        }
        const { updateOperator } = await import('@keyturn/server')
        await updateOperator(
          withDatabase(io, options.databaseUrl),
          operator,
          {
            ...(options.role === undefined ? {} : { role: options.role }),
            ...(options.disable === true ? { status: 'disabled' as const } : {}),
            ...(options.enable === true ? { status: 'active' as const } : {}),
          },
          { print: io.print },
        )
      },
    )
}

function withDatabase(io: Io, databaseUrl: string | undefined) {
  return { ...io.env, ...(databaseUrl === undefined ? {} : { KEYTURN_DATABASE_URL: databaseUrl }) }
}
