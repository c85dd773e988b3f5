/**
 * @module Sends one webhook over HTTP(S), signed with Standard Webhooks, refusing private targets:
 * the check runs on the address the hostname resolves to (in the socket's own lookup, so the
 * connection goes to exactly the address checked: DNS rebinding cannot slip past it).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { BlockList, isIP } from 'node:net'
import { Webhook } from 'standardwebhooks'
import type { AttemptResult } from './webhook-delivery.js'
import { maxKeptResponseBytes } from './webhook-delivery.js'

export interface WebhookRequest {
  readonly url: string
  /** The event id: `webhook-id`, so receivers can deduplicate. */
  readonly id: string
  readonly timestamp: Date
  readonly body: string
  readonly secret: string
}

/** The port the delivery worker sends through. */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<AttemptResult>
}

export const webhookTimeoutMs = 10_000

/** Loopback, private, link-local (cloud metadata 169.254.169.254), shared, reserved and multicast ranges. */
const privateRanges = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv6')
}

/** Whether an address is one webhooks may not reach by default (IPv4-mapped IPv6 judged as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  if (mapped !== undefined) {
    return privateRanges.check(mapped, 'ipv4')
  }
  const family = isIP(address)
  return family === 0 || privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

class RefusedAddress extends Error {}

/** node:dns `lookup` with `all: true`, the port a test replaces. */
export type HostLookup = (
  hostname: string,
  options: { readonly all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

/**
 * How many webhook hostnames are looked up at once. `dns.lookup` (getaddrinfo) runs on libuv's
 * thread pool, four threads that signed answers use too, and cannot be cancelled: with a slow or
 * silent DNS server, a hundred deliveries' lookups filled the pool and kept a stopped server alive
 * for 10–20 minutes in an adversarial test. The rest wait here, and give up after the delivery
 * timeout without taking a thread.
 */
export const maxConcurrentLookups = 2

export class HttpWebhookSender implements WebhookSender {
  readonly #allowPrivate: boolean
  readonly #userAgent: string
  readonly #hostLookup: HostLookup
  #lookupsRunning = 0
  readonly #waitingLookups: (() => void)[] = []

  constructor(options: {
    readonly allowPrivate: boolean
    readonly version: string
    readonly lookup?: HostLookup
  }) {
    this.#allowPrivate = options.allowPrivate
    this.#userAgent = `Keyturn-Webhooks/${options.version}`
    this.#hostLookup =
      options.lookup ?? ((hostname, lookupOptions, callback) => dnsLookup(hostname, lookupOptions, callback))
  }

  async send(request: WebhookRequest): Promise<AttemptResult> {
    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      return { kind: 'failed', error: 'The endpoint URL cannot be parsed.' }
    }
    const host = url.hostname.replace(/^\[|\]$/g, '')
    // An IP literal is connected to without a lookup: check it here.
    if (isIP(host) !== 0 && !this.#allowPrivate && isPrivateAddress(host)) {
      return { kind: 'failed', error: `Refused: ${host} is a private, loopback or link-local address.` }
    }
    const signature = new Webhook(request.secret).sign(request.id, request.timestamp, request.body)
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.#userAgent,
      'webhook-id': request.id,
      'webhook-timestamp': String(Math.floor(request.timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    }
    return new Promise<AttemptResult>((resolve) => {
      const client = url.protocol === 'https:' ? https : http
      const outgoing = client.request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': Buffer.byteLength(request.body) },
          lookup: this.#lookup,
          signal: AbortSignal.timeout(webhookTimeoutMs),
          agent: false, // a fresh connection per attempt: no socket reused past the address check
        },
        (response) => {
          const chunks: Buffer[] = []
          let kept = 0
          const finish = () =>
            resolve({
              kind: 'answered',
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
            })
          response.on('data', (chunk: Buffer) => {
            if (kept < maxKeptResponseBytes) {
              chunks.push(chunk.subarray(0, maxKeptResponseBytes - kept))
              kept += Math.min(chunk.length, maxKeptResponseBytes - kept)
            }
            if (kept >= maxKeptResponseBytes) {
              // Enough for the log: a huge or endless body never holds the worker.
              response.destroy()
              finish()
            }
          })
          response.on('end', finish)
          response.on('error', finish)
        },
      )
      outgoing.on('error', (error) => {
        resolve({ kind: 'failed', error: describe(error) })
      })
      outgoing.end(request.body)
    })
  }

  readonly #lookup = (
    hostname: string,
    options: object,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    this.#limitedLookup(hostname, (error, addresses) => {
      if (error !== null) {
        callback(error, '')
        return
      }
      const allowed = this.#allowPrivate
        ? addresses
        : addresses.filter((entry) => !isPrivateAddress(entry.address))
      if (allowed.length === 0) {
        callback(
          new RefusedAddress(
            `Refused: ${hostname} resolves only to private, loopback or link-local addresses.`,
          ),
          '',
        )
        return
      }
      if ((options as { all?: boolean }).all === true) {
        callback(null, allowed)
      } else {
        const [first] = allowed
        callback(null, first?.address ?? '', first?.family)
      }
    })
  }

  /** A lookup within `maxConcurrentLookups`; one that waited the whole delivery timeout fails unrun. */
  #limitedLookup(hostname: string, callback: Parameters<HostLookup>[2]): void {
    const run = () => {
      this.#lookupsRunning++
      this.#hostLookup(hostname, { all: true }, (error, addresses) => {
        this.#lookupsRunning--
        this.#waitingLookups.shift()?.()
        callback(error, addresses)
      })
    }
    if (this.#lookupsRunning < maxConcurrentLookups) {
      run()
      return
    }
    const expiry = setTimeout(() => {
      const at = this.#waitingLookups.indexOf(start)
      if (at !== -1) {
        this.#waitingLookups.splice(at, 1)
        callback(Object.assign(new Error(`lookup of ${hostname} timed out`), { code: 'ETIMEOUT' }), [])
      }
    }, webhookTimeoutMs)
    expiry.unref()
    const start = () => {
      clearTimeout(expiry)
      run()
    }
    this.#waitingLookups.push(start)
  }
}

function describe(error: Error): string {
  if (error instanceof RefusedAddress) {
    return error.message
  }
  if (error.name === 'TimeoutError' || error.name === 'AbortError') {
    return `No answer within ${webhookTimeoutMs / 1000} s.`
  }
  const code = (error as NodeJS.ErrnoException).code
  return code === undefined ? 'The request failed.' : `The request failed (${code}).`
}
