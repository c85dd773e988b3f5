import type { App } from './app-types.js'

/**
 * Once `close()` has begun, every response says `Connection: close`. Without it a keep-alive client
 * holds its idle connection open and `close()` waits for the client to drop it; with it, each
 * connection ends as soon as its in-flight request is answered.
 */
export function closeConnectionsWhenClosing(app: App): void {
  let isClosing = false
  app.addHook('preClose', async () => {
    isClosing = true
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (isClosing) {
      reply.header('connection', 'close')
    }
    done(null, payload)
  })
}
