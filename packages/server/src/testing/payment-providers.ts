/**
 * @module What the payment providers' webhook tests share: the providers' documented payloads
 * (integrations/fixtures), each provider's signature made as it documents it, and a test app that
 * mails through a real SMTP server (a sale mails the license key).
 */
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Stripe from 'stripe'
import { buildTestApp, type CleanupScope, type TestApp } from './build-test-app.js'
import type { TestDatabase } from './each-database.js'
import { startSmtpServer } from './smtp-server.js'

/** A payload from integrations/fixtures (fixtures/README.md names each one's source), as its text. */
export function providerFixture(name: string): string {
  return readFileSync(new URL(`../../src/integrations/fixtures/${name}`, import.meta.url), 'utf8')
}

/** Lemon Squeezy's `X-Signature`: hex HMAC-SHA256 of the raw body. */
export function lemonSqueezySignature(body: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/** Paddle's `Paddle-Signature`: `ts=<seconds>;h1=<hex HMAC-SHA256 of "<ts>:<raw body>">`. */
export function paddleSignature(seconds: number, body: string, secret: string): string {
  return `ts=${seconds};h1=${createHmac('sha256', secret).update(`${seconds}:${body}`).digest('hex')}`
}

/** Stripe's `Stripe-Signature` for `body` signed at `seconds`, made by the stripe SDK. */
export function stripeSignature(seconds: number, body: string, secret: string): string {
  return Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: seconds })
}

/** A test app that mails through a real SMTP server started for the test. */
export async function withMail(t: CleanupScope, database: TestDatabase) {
  const smtp = await startSmtpServer(t)
  const test = await buildTestApp(t, database, {
    mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
  })
  return { smtp, test }
}

/** Sends what the outbox holds; the addresses and bodies the SMTP server received. */
export async function mailed(test: TestApp, smtp: Awaited<ReturnType<typeof startSmtpServer>>) {
  await test.services.deliveries.tick()
  while (((await test.services.mail?.tick()) ?? 0) > 0) {}
  return smtp.received.map((mail) => ({ to: mail.to, body: mail.raw.replace(/=\r\n/g, '') }))
}
