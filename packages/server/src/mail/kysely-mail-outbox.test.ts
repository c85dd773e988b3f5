import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, type TestApp, testSecretKeys } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startSmtpServer } from '../testing/smtp-server.js'
import { call } from '../testing/vendors.js'
import { KyselyMailOutbox } from './kysely-mail-outbox.js'
import { MailWorker, mailRetrySchedule } from './mail-worker.js'
import { SmtpMailSender } from './smtp-mail-sender.js'

function worker(test: TestApp, url: string, t: { after(f: () => unknown): void }) {
  const sender = new SmtpMailSender({ url, from: 'Keyturn <licensing@example.com>' })
  t.after(() => sender.close())
  const outbox = new KyselyMailOutbox(test.connection.db, testSecretKeys.mailPayloadEncryption)
  return { outbox, worker: new MailWorker({ outbox, sender, clock: test.clock, random: () => 0.5 }) }
}

/** The delivery log through the API. */
async function emails(test: TestApp) {
  return (await call(test.app, test.headers, 'GET', '/emails', 200)).data
}

const message = (n = 1) => ({
  to: `ada${n}@example.com`,
  subject: `Your license ${n}`,
  text: `Key: K-${n}`,
  html: `<p>Key: K-${n}</p>`,
})

describeEachDatabase('Mail outbox', (database) => {
  it('delivers a queued message once, then purges its payload and logs no body', async (t) => {
    const test = await buildTestApp(t, database)
    const smtp = await startSmtpServer(t)
    const { outbox, worker: sending } = worker(test, smtp.url, t)
    await outbox.enqueue(
      test.connection.db,
      { template: 'license.issued', productId: test.productId, customerId: null, message: message() },
      test.clock.now(),
    )
    const stored = await test.connection.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow()
    assert.doesNotMatch(String(stored.payload_encrypted), /ada1|K-1/)

    assert.equal(await sending.tick(), 1)
    assert.equal(await sending.tick(), 0)
    assert.equal(smtp.received.length, 1)
    assert.deepEqual(smtp.received[0]?.to, ['ada1@example.com'])
    assert.match(smtp.received[0]?.raw ?? '', /Subject: Your license 1/)
    assert.match(smtp.received[0]?.raw ?? '', /<p>Key: K-1<\/p>/)
    const row = await test.connection.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow()
    assert.equal(row.status, 'sent')
    assert.equal(row.payload_encrypted, null)
    const [entry] = await emails(test)
    assert.deepEqual(
      Object.keys(entry ?? {}).filter((key) => /^(to|subject|text|html|body|message)$/i.test(key)),
      [],
    )
    assert.equal(await outbox.backlog(), 0)
    assert.doesNotMatch(JSON.stringify(entry), /ada1|K-1|Your license/)
    assert.deepEqual(sending.counters, { sent: 1, failedAttempts: 0 })
  })

  it('retries a message the SMTP server refused, after the backoff', async (t) => {
    const test = await buildTestApp(t, database)
    const smtp = await startSmtpServer(t)
    smtp.state.refuse = 1
    const { outbox, worker: sending } = worker(test, smtp.url, t)
    await outbox.enqueue(
      test.connection.db,
      { template: 'license.issued', productId: null, customerId: null, message: message() },
      test.clock.now(),
    )
    await sending.tick()
    assert.equal(smtp.received.length, 0)
    const failed = (await emails(test))[0]
    assert.equal(failed?.status, 'pending')
    assert.match(failed?.lastError ?? '', /451/)

    test.clock.advance(mailRetrySchedule[0] * 1000 - 1_000)
    assert.equal(await sending.tick(), 0) // not due yet
    test.clock.advance(1_000)
    assert.equal(await sending.tick(), 1)
    assert.equal(smtp.received.length, 1)
    assert.equal((await emails(test))[0]?.attempts, 2)
  })

  it('gives a message up after the last retry, and purges its payload', async (t) => {
    const test = await buildTestApp(t, database)
    const smtp = await startSmtpServer(t)
    smtp.state.refuse = mailRetrySchedule.length + 1
    const { outbox, worker: sending } = worker(test, smtp.url, t)
    await outbox.enqueue(
      test.connection.db,
      { template: 'license-issued', productId: null, customerId: null, message: message() },
      test.clock.now(),
    )
    for (const delay of [0, ...mailRetrySchedule]) {
      test.clock.advance(delay * 1100) // past the delay and its jitter
      assert.equal(await sending.tick(), 1)
    }
    const [entry] = await emails(test)
    assert.equal(entry?.status, 'failed')
    assert.equal(entry?.attempts, mailRetrySchedule.length + 1)
    assert.equal(entry?.nextAttemptAt, null)
    const row = await test.connection.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow()
    assert.equal(row.payload_encrypted, null)
    assert.equal(smtp.received.length, 0)
  })

  it('sends each message once when two processes send side by side', async (t) => {
    const test = await buildTestApp(t, database)
    const smtp = await startSmtpServer(t)
    const first = worker(test, smtp.url, t)
    const second = worker(test, smtp.url, t)
    for (let n = 0; n < 30; n++) {
      await first.outbox.enqueue(
        test.connection.db,
        { template: 'license.issued', productId: null, customerId: null, message: message(n) },
        test.clock.now(),
      )
    }
    while ((await Promise.all([first.worker.tick(), second.worker.tick()])).some((count) => count > 0)) {}
    assert.equal(smtp.received.length, 30)
    assert.equal(new Set(smtp.received.map((mail) => mail.to[0])).size, 30)
  })
})
