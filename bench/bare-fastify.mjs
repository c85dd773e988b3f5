/**
 * The HTTP ceiling: the Fastify version Keyturn uses, no logger, no hooks, one route answering a
 * small JSON object (with a response schema, as Keyturn's routes have). Run as its own process by
 * bench/servers.mjs; stops on SIGTERM.
 */
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get(
  '/hello',
  {
    schema: {
      response: {
        200: { type: 'object', properties: { hello: { type: 'string' } }, required: ['hello'] },
      },
    },
  },
  async () => ({ hello: 'world' }),
)

const url = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`bare Fastify listening on ${url}\n`)
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0))
  })
}
