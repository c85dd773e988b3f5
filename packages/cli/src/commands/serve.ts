import type { Command } from 'commander'
import type { Io } from '../io.js'

/** `keyturn serve`: loads the server lazily, so API commands never load Fastify or the drivers. */
export function registerServe(program: Command, io: Io): void {
  program
    .command('serve')
    .description('Start the Keyturn server (configured by environment variables; flags override them)')
    .option('--port <port>', 'listen port (PORT)')
    .option('--host <host>', 'listen address (HOST)')
    .option('--database-url <url>', 'sqlite:<path>, sqlite::memory: or postgres://… (KEYTURN_DATABASE_URL)')
    .addHelpText(
      'after',
      '\nExample:\n  KEYTURN_DATABASE_URL=sqlite:./data/keyturn.db keyturn serve --port 8080',
    )
    .action(async (options: { port?: string; host?: string; databaseUrl?: string }) => {
      const { serve } = await import('@keyturn/server')
      const env = {
        ...io.env,
        ...(options.port === undefined ? {} : { PORT: options.port }),
        ...(options.host === undefined ? {} : { HOST: options.host }),
        ...(options.databaseUrl === undefined ? {} : { KEYTURN_DATABASE_URL: options.databaseUrl }),
      }
      // serve prints where it listens (and the first admin key, once).
      const server = await serve(env, { print: io.print, logs: io.logs })
      await io.untilShutdown()
      await server.close()
    })
}
