import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

export interface ReceivedWebhook {
  readonly headers: Record<string, string>
  readonly body: string
}

/**
 * A real HTTP receiver on loopback: records every request and answers `status` (changeable). While
 * `hold` is true it records requests but leaves them unanswered until `release()`.
 */
export interface WebhookReceiver {
  readonly url: string
  readonly port: number
  readonly received: ReceivedWebhook[]
  status: number
  hold: boolean
  /** Requests received and not yet answered (held). */
  readonly held: readonly ReceivedWebhook[]
  /** Stops holding and answers every held request with `status`. */
  release(): void
}

export async function startWebhookReceiver(t: TestContext, status = 200): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  const waiting: { readonly webhook: ReceivedWebhook; readonly answer: () => void }[] = []
  const receiver: { -readonly [K in keyof WebhookReceiver]: WebhookReceiver[K] } = {
    received,
    status,
    url: '',
    port: 0,
    hold: false,
    get held() {
      return waiting.map((entry) => entry.webhook)
    },
    release() {
      receiver.hold = false
      for (const entry of waiting.splice(0)) {
        entry.answer()
      }
    },
  }
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      )
      const webhook = { headers, body: Buffer.concat(chunks).toString('utf8') }
      received.push(webhook)
      const answer = () => {
        if (response.destroyed) {
          return // the sender is gone (killed, or gave up)
        }
        response.writeHead(receiver.status, { 'content-type': 'text/plain' })
        response.end(receiver.status < 300 ? 'ok' : 'x'.repeat(4000)) // a long body: kept to 1 KiB
      }
      if (receiver.hold) {
        waiting.push({ webhook, answer })
      } else {
        answer()
      }
    })
  })
  server.on('clientError', (_error, socket) => socket.destroy()) // a killed sender's socket
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo // a TCP server's address is an AddressInfo
  receiver.port = port
  receiver.url = `http://127.0.0.1:${port}/hooks`
  t.after(() => {
    // Not waiting for 'close': a connection a killed sender left half-open must not hold the test.
    server.close()
    server.closeAllConnections()
  })
  server.unref()
  return receiver
}
