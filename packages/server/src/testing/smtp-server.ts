import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import type { CleanupScope } from './build-test-app.js'

export interface ReceivedMail {
  readonly to: string[]
  /** The whole message as it arrived (headers and MIME parts). */
  readonly raw: string
}

/**
 * A real SMTP server on loopback (the `smtp-server` package), closed after the test. `refuse`
 * answers that many next messages with a 451; `hang` never greets a connection.
 */
export async function startSmtpServer(t: CleanupScope, options: { readonly hang?: boolean } = {}) {
  const received: ReceivedMail[] = []
  const state = { refuse: 0 }
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // No reverse DNS lookup of 127.0.0.1 per connection (up to 1.5 s each where DNS is slow or absent).
    disableReverseLookup: true,
    ...(options.hang === true ? { onConnect: () => {} } : {}),
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (state.refuse > 0) {
          state.refuse--
          callback(Object.assign(new Error('try again later'), { responseCode: 451 }))
          return
        }
        received.push({
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString(),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // A hanging server's connections are never closed by the client: end them here.
        for (const connection of (server as unknown as { connections: Set<{ close(): void }> }).connections ??
          []) {
          connection.close()
        }
      }),
  )
  const port = (server.server.address() as AddressInfo).port
  return { received, state, url: `smtp://127.0.0.1:${port}?tls=off` }
}
