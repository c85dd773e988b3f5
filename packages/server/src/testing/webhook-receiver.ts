import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

export interface ReceivedWebhook {
  readonly headers: Record<string, string>
  readonly body: string
}

/** A real HTTP receiver on loopback: records every request and answers `status` (changeable). */
export interface WebhookReceiver {
  readonly url: string
  readonly port: number
  readonly received: ReceivedWebhook[]
  status: number
}

export async function startWebhookReceiver(t: TestContext, status = 200): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  const receiver = { received, status, url: '', port: 0 }
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      )
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8') })
      response.writeHead(receiver.status, { 'content-type': 'text/plain' })
      response.end(receiver.status < 300 ? 'ok' : 'x'.repeat(4000)) // a long body: kept to 1 KiB
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo // a TCP server's address is an AddressInfo
  receiver.port = port
  receiver.url = `http://127.0.0.1:${port}/hooks`
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  server.unref()
  return receiver
}
