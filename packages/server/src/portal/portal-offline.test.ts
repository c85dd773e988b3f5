import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import { createActivationRequest, createDeactivationCode, verifyLicenseFile } from '@keyturn/client'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase, type TestDatabase } from '../testing/each-database.js'
import { PortalVisitor } from '../testing/portal-visitor.js'
import { startSmtpServer } from '../testing/smtp-server.js'
import { call } from '../testing/vendors.js'

/** The page's text as a reader sees it (Eta escapes quotes). */
function text(body: string): string {
  return body.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&')
}

async function license(test: TestApp, email: string, body: Record<string, unknown>) {
  const customer = await call(test.app, test.headers, 'POST', '/customers', 201, { email })
  return {
    customer,
    license: await call(test.app, test.headers, 'POST', '/licenses', 201, {
      productId: test.productId,
      customerId: customer.id,
      ...body,
    }),
  }
}

async function events(test: TestApp, type: string) {
  return (await call(test.app, test.headers, 'GET', `/events?filter=type:eq:${type}`, 200)).data
}

async function machinesOf(test: TestApp, licenseId: string): Promise<string[]> {
  const page = await call(test.app, test.headers, 'GET', `/licenses/${licenseId}/activations`, 200)
  return page.data.map((activation: { fingerprint: string }) => activation.fingerprint).sort()
}

/** An app with the portal on and its mail going to a test SMTP server; `send` delivers what is queued. */
async function portalApp(t: TestContext, database: TestDatabase) {
  const smtp = await startSmtpServer(t)
  const test = await buildTestApp(t, database, {
    mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
    portal: { enabled: true, url: 'https://licenses.example.com/portal' },
  })
  const send = async () => {
    await test.services.deliveries.tick()
    while (((await test.services.mail?.tick()) ?? 0) > 0) {}
  }
  return { smtp, test, send }
}

describeEachDatabase('Customer portal: machines without internet', (database) => {
  it('activates by request file within the seat limit, refuses another customer’s request, frees a machine by its code and locks out code guessing', async (t) => {
    const { smtp, test, send } = await portalApp(t, database)
    const { clock, productId } = test
    const ada = await license(test, 'ada@example.com', { maxActivations: 2 })
    const bob = await license(test, 'bob@example.com', { maxActivations: 2 })
    await call(test.app, test.headers, 'POST', `/licenses/${ada.license.id}/activations`, 201, {
      fingerprint: 'online-laptop',
    })
    const request = (licenseKey: string, fingerprint: string) =>
      createActivationRequest({ licenseKey, productId, fingerprint, name: 'Lab PC', now: clock.now() })

    const visitor = new PortalVisitor(test.app)
    const overview = await visitor.signIn('ada@example.com', smtp, send)
    assert.match(overview.body, new RegExp(`href="/portal/licenses/${ada.license.id}/offline"`))
    const offlinePath = `/portal/licenses/${ada.license.id}/offline`
    assert.equal((await visitor.get(offlinePath)).statusCode, 200)

    // Bob's request, handed in by Ada: on her license it is not her key, his license is not found to her.
    const bobs = await request(bob.license.key, 'bobs-pc')
    const onHers = await visitor.post(`${offlinePath}/activate`, { csrf: visitor.csrf, request: bobs })
    assert.equal(onHers.statusCode, 400)
    assert.match(text(onHers.body), /That request was not made with this license's key/)
    const onHis = await visitor.post(`/portal/licenses/${bob.license.id}/offline/activate`, {
      csrf: visitor.csrf,
      request: bobs,
    })
    assert.equal(onHis.statusCode, 404)
    assert.deepEqual(await machinesOf(test, bob.license.id), [], 'nothing was created for Bob')

    // Not a request file, or no CSRF token: refused on the page, nothing changed.
    const junk = await visitor.post(`${offlinePath}/activate`, { csrf: visitor.csrf, request: 'hello' })
    assert.equal(junk.statusCode, 400)
    assert.match(
      text(junk.body),
      /That is not a usable activation request file\. Not an activation request file/,
    )
    const long = await visitor.post(`${offlinePath}/activate`, {
      csrf: visitor.csrf,
      request: 'x'.repeat(9000),
    })
    assert.equal(long.statusCode, 400)
    assert.match(long.body, /one is at most 8192 characters/)
    const huge = await visitor.post(`${offlinePath}/activate`, {
      csrf: visitor.csrf,
      request: 'x'.repeat(40_000),
    })
    assert.equal(huge.statusCode, 413, 'a body past the form limit is refused before it is read')
    const mine = await request(ada.license.key, 'air-gapped-pc')
    const forged = await visitor.post(`${offlinePath}/activate`, { csrf: 'forged', request: mine })
    assert.equal(forged.statusCode, 403)
    assert.deepEqual(await machinesOf(test, ada.license.id), ['online-laptop'])

    // Her own request: the machine file, shown and downloadable; the seat counted with the online one.
    const answered = await visitor.post(`${offlinePath}/activate`, { csrf: visitor.csrf, request: mine })
    assert.equal(answered.statusCode, 201, answered.body)
    const shown = /<pre id="license-file"[^>]*>([^<]*)<\/pre>/.exec(answered.body)?.[1] ?? ''
    const download = await visitor.post(`${offlinePath}/activate`, {
      csrf: visitor.csrf,
      request: mine,
      download: '1',
    })
    assert.equal(download.statusCode, 200)
    assert.equal(download.headers['content-disposition'], 'attachment; filename="license-Lab-PC.lic"')
    assert.equal(text(shown), download.body, 'the copy on the page is the downloaded file')
    const file = await verifyLicenseFile(download.body, {
      publicKey: (await call(test.app, test.headers, 'GET', `/products/${productId}`, 200)).publicKey,
      productId,
      licenseKey: ada.license.key,
      fingerprint: 'air-gapped-pc',
      now: clock.now(),
    })
    assert.deepEqual(await machinesOf(test, ada.license.id), ['air-gapped-pc', 'online-laptop'])
    const activated = await events(test, 'activation.created')
    assert.equal(activated.length, 2, 'the download repeated the request: no second activation')
    assert.deepEqual(activated[0].actor, { type: 'customer', id: ada.customer.id })
    assert.equal(activated[0].data.mode, 'offline')
    const full = await visitor.post(`${offlinePath}/activate`, {
      csrf: visitor.csrf,
      request: await request(ada.license.key, 'third-pc'),
    })
    assert.equal(full.statusCode, 409)
    assert.match(text(full.body), /Every machine this license allows is in use/)

    // A machine activated offline keeps working on its file: the plain Deactivate does not free it.
    const listed = await visitor.get('/portal/licenses')
    assert.match(listed.body, /Lab PC<\/strong> · activated offline/)
    assert.doesNotMatch(listed.body, /aria-label="Deactivate Lab PC"/)
    const plain = await visitor.post(`/portal/machines/${file.activationId}/deactivate`, {
      csrf: visitor.csrf,
    })
    assert.equal(plain.statusCode, 409)
    assert.match(
      plain.body,
      /Lab PC was activated offline: deactivate it on the machine, then enter the code/,
    )
    assert.deepEqual(await machinesOf(test, ada.license.id), ['air-gapped-pc', 'online-laptop'])

    // Deactivation codes: only for her machines; five wrong ones lock, then the right one frees the seat.
    const id = file.activationId ?? ''
    const right = await createDeactivationCode({
      activationId: id,
      secret: file.deactivationSecret ?? '',
      now: clock.now(),
    })
    const bobsMachine = await call(
      test.app,
      test.headers,
      'POST',
      `/licenses/${bob.license.id}/activations`,
      201,
      {
        fingerprint: 'bobs-laptop',
      },
    )
    const foreign = await visitor.post(`${offlinePath}/deactivate`, {
      csrf: visitor.csrf,
      machine: bobsMachine.id,
      code: right,
    })
    assert.equal(foreign.statusCode, 404)
    const wrong = right.startsWith('0') ? `1${right.slice(1)}` : `0${right.slice(1)}`
    for (let attempt = 1; attempt <= 5; attempt++) {
      const refused = await visitor.post(`${offlinePath}/deactivate`, {
        csrf: visitor.csrf,
        machine: id,
        code: wrong,
      })
      assert.equal(refused.statusCode, 422)
      assert.match(
        text(refused.body),
        attempt < 5
          ? new RegExp(`${5 - attempt} more wrong codes lock`)
          : /Too many wrong codes: freeing this machine by code is locked/,
      )
    }
    const locked = await visitor.post(`${offlinePath}/deactivate`, {
      csrf: visitor.csrf,
      machine: id,
      code: right,
    })
    assert.equal(locked.statusCode, 409)
    assert.match(text(locked.body), /Try again in 60 minutes/)
    assert.equal(locked.headers['retry-after'], '3600')
    assert.deepEqual(await machinesOf(test, ada.license.id), ['air-gapped-pc', 'online-laptop'])

    clock.advance(3_600_000)
    const later = new PortalVisitor(test.app) // the first session has gone idle meanwhile
    await later.signIn('ada@example.com', smtp, send)
    await later.get(offlinePath)
    const grouped = right.toLowerCase().replaceAll('-', ' ')
    const freed = await later.post(`${offlinePath}/deactivate`, {
      csrf: later.csrf,
      machine: id,
      code: grouped,
    })
    assert.equal(freed.statusCode, 303, freed.body)
    assert.equal(freed.headers.location, `${offlinePath}?done=freed`)
    assert.match((await later.get(freed.headers.location)).body, /The machine was freed/)
    assert.deepEqual(await machinesOf(test, ada.license.id), ['online-laptop'])
    const deleted = await events(test, 'activation.deleted')
    assert.deepEqual(
      deleted.map((event: { actor: unknown; data: { id: string } }) => [event.actor, event.data.id]),
      [[{ type: 'customer', id: ada.customer.id }, id]],
    )
  })

  it('counts a machine freed by code as one of the license’s portal transfers', async (t) => {
    const { smtp, test, send } = await portalApp(t, database)
    const policy = await call(test.app, test.headers, 'POST', '/policies', 201, {
      productId: test.productId,
      name: 'One transfer a month',
      maxActivations: 3,
      maxTransfers: 1,
    })
    const ada = await license(test, 'ada@example.com', { policyId: policy.id })
    const online = await call(
      test.app,
      test.headers,
      'POST',
      `/licenses/${ada.license.id}/activations`,
      201,
      {
        fingerprint: 'online-laptop',
      },
    )
    const visitor = new PortalVisitor(test.app)
    await visitor.signIn('ada@example.com', smtp, send)
    const offlinePath = `/portal/licenses/${ada.license.id}/offline`
    await visitor.get(offlinePath)
    const requestFile = await createActivationRequest({
      licenseKey: ada.license.key,
      productId: test.productId,
      fingerprint: 'air-gapped-pc',
      now: test.clock.now(),
    })
    const download = await visitor.post(`${offlinePath}/activate`, {
      csrf: visitor.csrf,
      request: requestFile,
      download: '1',
    })
    assert.equal(download.statusCode, 200, download.body)
    const file = await verifyLicenseFile(download.body, {
      publicKey: (await call(test.app, test.headers, 'GET', `/products/${test.productId}`, 200)).publicKey,
      productId: test.productId,
      licenseKey: ada.license.key,
      fingerprint: 'air-gapped-pc',
      now: test.clock.now(),
    })
    const freedOnline = await visitor.post(`/portal/machines/${online.id}/deactivate`, { csrf: visitor.csrf })
    assert.equal(freedOnline.statusCode, 303)
    const code = await createDeactivationCode({
      activationId: file.activationId ?? '',
      secret: file.deactivationSecret ?? '',
      now: test.clock.now(),
    })
    const limited = await visitor.post(`${offlinePath}/deactivate`, {
      csrf: visitor.csrf,
      machine: file.activationId ?? '',
      code,
    })
    assert.equal(limited.statusCode, 409)
    assert.match(limited.body, /No deactivations are left on this license: at most 1 in 30 days/)
    assert.deepEqual(await machinesOf(test, ada.license.id), ['air-gapped-pc'])
  })
})
