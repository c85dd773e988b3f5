import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startSmtpServer } from '../testing/smtp-server.js'
import { call } from '../testing/vendors.js'
import { ExpiryNoticeService } from './expiry-notice-service.js'
import { KyselyExpiryNoticeStore } from './kysely-expiry-notice-store.js'

const dayMs = 86_400_000

async function notices(test: TestApp): Promise<string[]> {
  const events: { type: string; data: { id: string; expiresInDays?: number } }[] = (
    await call(test.app, test.headers, 'GET', '/events?limit=100', 200)
  ).data
  return events
    .filter((event) => event.type === 'license.expiring_soon' || event.type === 'license.expired')
    .map((event) => `${event.type}:${event.data.expiresInDays ?? '-'}:${event.data.id}`)
    .sort()
}

describeEachDatabase('Expiry notices', (database) => {
  it('announces each license once per notice day and once expired, in bounded batches, and mails its customer', async (t) => {
    const smtp = await startSmtpServer(t)
    const test = await buildTestApp(t, database, {
      mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
    })
    const at = (days: number) => new Date(test.clock.now().getTime() + days * dayMs).toISOString()
    const customer = await call(test.app, test.headers, 'POST', '/customers', 201, {
      email: 'ada@example.com',
    })
    const create = (days: number, extra: object = {}) =>
      call(test.app, test.headers, 'POST', '/licenses', 201, {
        productId: test.productId,
        expirationDate: at(days),
        ...extra,
      })
    const soon = await create(10, { customerId: customer.id }) // inside 14 days already
    const later = await create(20)
    const revoked = await create(10)
    await call(test.app, test.headers, 'POST', `/licenses/${revoked.id}/revoke`, 200)
    await create(400) // far off: never read
    const service = new ExpiryNoticeService({
      store: new KyselyExpiryNoticeStore(test.connection.db),
      clock: test.clock,
      noticeDays: [14, 3],
      batchSize: 1,
    })
    const runAll = async () => {
      let read = 0
      for (let run = await service.tick(); ; run = await service.tick()) {
        read += run.read
        if (!run.isBatchFull) {
          return read
        }
      }
    }

    assert.equal(await runAll(), 2, 'the 10-day license and the revoked one, one per step')
    assert.deepEqual(await notices(test), [`license.expiring_soon:14:${soon.id}`])
    assert.equal(await runAll(), 0, 'nothing read twice')

    test.clock.advance(7 * dayMs) // soon: 3 days left; later: 13
    await runAll()
    test.clock.advance(4 * dayMs) // soon expired
    await runAll()
    await runAll()

    assert.deepEqual(
      await notices(test),
      [
        `license.expired:-:${soon.id}`,
        `license.expiring_soon:14:${later.id}`,
        `license.expiring_soon:14:${soon.id}`,
        `license.expiring_soon:3:${soon.id}`,
      ].sort(),
    )
    await test.services.deliveries.tick()
    while (((await test.services.mail?.tick()) ?? 0) > 0) {}
    const subjects = smtp.received.map((mail) => /^Subject: (.*)$/m.exec(mail.raw)?.[1]).sort()
    assert.deepEqual(subjects, [
      'Your Test Product license',
      `Your Test Product license expires on ${at(-1).slice(0, 10)}`,
      `Your Test Product license expires on ${at(-1).slice(0, 10)}`,
      'Your Test Product license has expired',
    ])
  })
})
