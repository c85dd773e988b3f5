import assert from 'node:assert/strict'
import { it } from 'node:test'
import { verifyLicenseFile } from '@keyturn/client'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { codeIn, isSignInMail, PortalVisitor } from '../testing/portal-visitor.js'
import { startSmtpServer } from '../testing/smtp-server.js'
import { call, roleHeaders } from '../testing/vendors.js'

const portal = { enabled: true, url: 'https://licenses.example.com/portal' }

async function portalApp(
  t: Parameters<typeof startSmtpServer>[0],
  database: Parameters<typeof buildTestApp>[1],
  trustProxy = false,
) {
  const smtp = await startSmtpServer(t)
  const test = await buildTestApp(t, database, {
    mail: { smtpUrl: smtp.url, from: 'licensing@acme.example', templatesFolder: undefined },
    portal,
    trustProxy,
  })
  const send = async () => {
    await test.services.deliveries.tick()
    while (((await test.services.mail?.tick()) ?? 0) > 0) {}
  }
  return { smtp, test, send }
}

/** A customer with one license (of `policy`, when given) and `machines` activations. */
async function owner(test: TestApp, email: string, machines: number, policyId?: string) {
  const customer = await call(test.app, test.headers, 'POST', '/customers', 201, { email })
  const license = await call(test.app, test.headers, 'POST', '/licenses', 201, {
    productId: test.productId,
    customerId: customer.id,
    maxActivations: 10,
    ...(policyId === undefined ? {} : { policyId }),
  })
  const activations = []
  for (let index = 0; index < machines; index++) {
    activations.push(
      await call(test.app, test.headers, 'POST', `/licenses/${license.id}/activations`, 201, {
        fingerprint: `${email}-machine-${index}`,
        name: `Machine ${index}`,
      }),
    )
  }
  return { customer, license, activations }
}

async function events(test: TestApp, type: string) {
  return (await call(test.app, test.headers, 'GET', `/events?filter=type:eq:${type}`, 200)).data
}

describeEachDatabase('Customer portal', (database) => {
  it('signs in with the mailed code, shows only the customer’s licenses, deactivates up to the transfer limit, signs out', async (t) => {
    const { smtp, test, send } = await portalApp(t, database)
    const policy = await call(test.app, test.headers, 'POST', '/policies', 201, {
      productId: test.productId,
      name: 'Two transfers a week',
      maxTransfers: 2,
      transferPeriod: 7 * 86_400,
    })
    assert.equal(policy.maxTransfers, 2)
    const ada = await owner(test, 'ada@example.com', 3, policy.id)
    const bob = await owner(test, 'bob@example.com', 1)

    const visitor = new PortalVisitor(test.app)
    const page = await visitor.signIn('Ada@Example.com', smtp, send)
    assert.ok(page.body.includes(ada.license.key))
    assert.ok(!page.body.includes(bob.license.key), 'another customer’s license is not shown')
    assert.match(page.body, /Machine 2/)
    assert.match(page.body, /You may deactivate 2 more machines now \(at most 2 in any 7 days\)/)
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/)
    const cookies = visitor.cookieHeader
    assert.match(cookies, /keyturn_portal_session=/)

    // The code was single use.
    const again = await new PortalVisitor(test.app).post('/portal/code', {
      email: 'ada@example.com',
      code: codeIn(smtp.received, 'ada@example.com'),
    })
    assert.equal(again.statusCode, 400)

    // A license file for one of the machines, bound to it.
    const download = await visitor.post(`/portal/machines/${ada.activations[0].id}/license-file`, {
      csrf: visitor.csrf,
    })
    assert.equal(download.statusCode, 200, download.body)
    assert.match(
      String(download.headers['content-disposition']),
      /^attachment; filename="license-Machine-0\.lic"$/,
    )
    const verified = await verifyLicenseFile(download.body, {
      publicKey: (await call(test.app, test.headers, 'GET', `/products/${test.productId}`, 200)).publicKey,
      productId: test.productId,
      licenseKey: ada.license.key,
      fingerprint: ada.activations[0].fingerprint,
      now: test.clock.now(),
    })
    assert.equal(verified.activationId, ada.activations[0].id)
    assert.equal(verified.encrypted, true)
    const fileEvents = await events(test, 'license.file_issued')
    assert.deepEqual(fileEvents[0].actor, { type: 'customer', id: ada.customer.id })

    // Without the CSRF token, nothing happens.
    const [first, second, third] = ada.activations
    const forged = await visitor.post(`/portal/machines/${first.id}/deactivate`, { csrf: 'forged' })
    assert.equal(forged.statusCode, 403)

    for (const machine of [first, second]) {
      const done = await visitor.post(`/portal/machines/${machine.id}/deactivate`, { csrf: visitor.csrf })
      assert.equal(done.statusCode, 303, done.body)
    }
    const limited = await visitor.post(`/portal/machines/${third.id}/deactivate`, { csrf: visitor.csrf })
    assert.equal(limited.statusCode, 409)
    assert.match(limited.body, /No deactivations are left on this license: at most 2 in 7 days/)
    const left = await call(test.app, test.headers, 'GET', `/licenses/${ada.license.id}/activations`, 200)
    assert.deepEqual(
      left.data.map((activation: { id: string }) => activation.id),
      [third.id],
    )
    const deleted = await events(test, 'activation.deleted')
    assert.equal(deleted.length, 2)
    assert.deepEqual(deleted[0].actor, { type: 'customer', id: ada.customer.id })
    // Counted as deactivations in the daily statistics; the refused one is not.
    await test.services.stats.flush()
    const stats = await call(test.app, test.headers, 'GET', `/stats?productId=${test.productId}`, 200)
    assert.equal(stats.totals.deactivations, 2)

    // The window rolls: a week later one more transfer is allowed.
    test.clock.advance(7 * 86_400_000 + 1000)
    const signedInAgain = new PortalVisitor(test.app)
    await signedInAgain.signIn('ada@example.com', smtp, send)
    const later = await signedInAgain.post(`/portal/machines/${third.id}/deactivate`, {
      csrf: signedInAgain.csrf,
    })
    assert.equal(later.statusCode, 303, later.body)

    const resent = await signedInAgain.post(`/portal/licenses/${ada.license.id}/resend-key`, {
      csrf: signedInAgain.csrf,
    })
    assert.equal(resent.statusCode, 303)
    const before = smtp.received.length
    await send()
    assert.ok(
      smtp.received.slice(before).some((mail) => mail.raw.replace(/=\r\n/g, '').includes(ada.license.key)),
      'the key was mailed again',
    )

    const out = await signedInAgain.post('/portal/sign-out', { csrf: signedInAgain.csrf })
    assert.equal(out.statusCode, 303)
    assert.equal((await signedInAgain.get('/portal/licenses')).statusCode, 303, 'signed out')
    const signedIn = await events(test, 'portal.signed_in')
    assert.equal(signedIn.length, 2)
    assert.equal((await events(test, 'portal.signed_out')).length, 1)
  })

  it('answers an unknown address as a customer’s, mails nothing, and locks out code guessing after 5 tries', async (t) => {
    const { smtp, test, send } = await portalApp(t, database)
    await owner(test, 'ada@example.com', 0)
    const visitor = new PortalVisitor(test.app)
    const known = await visitor.post('/portal/sign-in', { email: 'ada@example.com' })
    const unknown = await visitor.post('/portal/sign-in', { email: 'nobody@example.com' })
    assert.equal(unknown.statusCode, known.statusCode)
    assert.equal(
      unknown.body.replaceAll('nobody@example.com', 'X'),
      known.body.replaceAll('ada@example.com', 'X'),
    )
    await send()
    assert.deepEqual(
      smtp.received.filter(isSignInMail).map((mail) => mail.to),
      [['ada@example.com']],
    )
    const requested = await events(test, 'portal.sign_in_requested')
    assert.equal(requested.length, 2)

    const code = codeIn(smtp.received, 'ada@example.com')
    const wrong = code === '000000' ? '111111' : '000000'
    for (let attempt = 1; attempt <= 5; attempt++) {
      const response = await visitor.post('/portal/code', { email: 'ada@example.com', code: wrong })
      assert.equal(response.statusCode, 400)
    }
    // The right code no longer works: the code is dead and the address locked for a while.
    const late = await visitor.post('/portal/code', { email: 'ada@example.com', code })
    assert.equal(late.statusCode, 429)
    assert.ok(Number(late.headers['retry-after']) > 0)
    test.clock.advance(16 * 60_000)
    const stillDead = await visitor.post('/portal/code', { email: 'ada@example.com', code })
    assert.equal(stillDead.statusCode, 400)
    assert.match(stillDead.body, /no longer works/)
    const failed = await events(test, 'portal.sign_in_failed')
    assert.ok(failed.some((event: { data: { reason: string } }) => event.data.reason === 'too_many_tries'))

    // A code lasts 10 minutes.
    await visitor.post('/portal/sign-in', { email: 'ada@example.com' })
    await send()
    test.clock.advance(10 * 60_000)
    const expired = await visitor.post('/portal/code', {
      email: 'ada@example.com',
      code: codeIn(smtp.received, 'ada@example.com'),
    })
    assert.equal(expired.statusCode, 400)

    // Housekeeping removes codes a day after they expired, and expired sessions.
    test.clock.advance(86_400_000 + 3_600_000)
    assert.equal(await test.services.portal.purge(), 3, 'the three codes asked so far')
    const dead = await visitor.post('/portal/code', { email: 'ada@example.com', code })
    assert.match(dead.body, /no longer works/)

    // Asking for codes is limited per address.
    const limits = []
    for (let request = 0; request < 6; request++) {
      limits.push((await visitor.post('/portal/sign-in', { email: 'eve@example.com' })).statusCode)
    }
    assert.deepEqual(limits, [200, 200, 200, 200, 200, 429])
    // And per IP address: 30 in 15 minutes, whatever the addresses.
    const crawler = new PortalVisitor(test.app, '203.0.113.9')
    const fromOneIp = []
    for (let request = 0; request < 31; request++) {
      fromOneIp.push((await crawler.post('/portal/sign-in', { email: `x${request}@example.com` })).statusCode)
    }
    assert.deepEqual(fromOneIp, [...Array(30).fill(200), 429])
  })

  it('never shows or touches another customer’s license or machine, on any portal route', async (t) => {
    const { smtp, test, send } = await portalApp(t, database)
    const ada = await owner(test, 'ada@example.com', 1)
    const bob = await owner(test, 'bob@example.com', 1)
    const visitor = new PortalVisitor(test.app)
    await visitor.signIn('ada@example.com', smtp, send)
    const bobLicense = bob.license.id
    const bobMachine = bob.activations[0].id
    const routes = [
      `/portal/machines/${bobMachine}/deactivate`,
      `/portal/machines/${bobMachine}/license-file`,
      `/portal/licenses/${bobLicense}/resend-key`,
      // An id of the wrong kind, or none that exists, answers the same.
      `/portal/machines/${bobLicense}/deactivate`,
      `/portal/licenses/${bobMachine}/resend-key`,
      '/portal/machines/act_nothing/deactivate',
    ]
    for (const route of routes) {
      const response = await visitor.post(route, { csrf: visitor.csrf })
      assert.equal(response.statusCode, 404, route)
    }
    const page = await visitor.get('/portal/licenses')
    assert.ok(!page.body.includes(bob.license.key))
    assert.ok(!page.body.includes(bobMachine))
    await send()
    assert.ok(
      !smtp.received.some(
        (mail) => mail.raw.includes(bob.license.key) && mail.to.includes('ada@example.com'),
      ),
    )
    const machines = await call(test.app, test.headers, 'GET', `/licenses/${bobLicense}/activations`, 200)
    assert.equal(machines.data.length, 1, 'Bob’s machine is still there')
    // Ada's own machine, for contrast, is hers to deactivate.
    const own = await visitor.post(`/portal/machines/${ada.activations[0].id}/deactivate`, {
      csrf: visitor.csrf,
    })
    assert.equal(own.statusCode, 303)
    // Without a session every write is refused.
    const stranger = await new PortalVisitor(test.app).post(`/portal/licenses/${bobLicense}/resend-key`, {
      csrf: visitor.csrf,
    })
    assert.equal(stranger.statusCode, 401)
  })

  it('escapes a hostile product name on its pages and mails a portal link (202, no body) from the API', async (t) => {
    const { smtp, test, send } = await portalApp(t, database)
    const hostile = '<img src=x onerror=alert(1)>'
    await call(test.app, test.headers, 'PATCH', `/products/${test.productId}`, 200, {
      branding: { displayName: hostile, accentColor: '#0a5f38' },
    })
    const ada = await owner(test, 'ada@example.com', 1)
    const signIn = await new PortalVisitor(test.app).get(`/portal?product=${test.productId}`)
    assert.equal(signIn.statusCode, 200)
    assert.ok(signIn.body.includes('&lt;img src=x onerror=alert(1)&gt;'), signIn.body)
    assert.ok(!signIn.body.includes(hostile), 'sign-in page')
    const accent = await test.app.inject(`/portal/assets/accent/${test.productId}.css`)
    assert.equal(accent.body, ':root { --accent: #0a5f38; }\n')

    const link = await test.app.inject({
      method: 'POST',
      url: `/api/v0/customers/${ada.customer.id}/portal-link`,
      headers: test.headers,
    })
    assert.equal(link.statusCode, 202)
    assert.equal(link.body, '')
    await send()
    const raw =
      smtp.received.filter(isSignInMail).at(-1)?.raw.replace(/=\r\n/g, '').replace(/=3D/g, '=') ?? ''
    assert.ok(raw.includes('https://licenses.example.com/portal/code?email=ada%40example.com'), raw)
    const visitor = new PortalVisitor(test.app)
    const signedIn = await visitor.post('/portal/code', {
      email: 'ada@example.com',
      code: codeIn(smtp.received, 'ada@example.com'),
    })
    assert.equal(signedIn.statusCode, 303)
    const page = await visitor.get('/portal/licenses')
    assert.ok(page.body.includes('&lt;img src=x onerror=alert(1)&gt;'), page.body)
    assert.ok(!page.body.includes(hostile), 'licenses page')
    const emails = await call(test.app, test.headers, 'GET', '/emails', 200)
    assert.ok(emails.data.every((entry: Record<string, unknown>) => !JSON.stringify(entry).match(/\d{6}/)))
  })

  it('lists a customer’s portal sessions for admin keys, which may revoke one', async (t) => {
    const { smtp, test, send } = await portalApp(t, database)
    const ada = await owner(test, 'ada@example.com', 0)
    const phone = new PortalVisitor(test.app)
    const laptop = new PortalVisitor(test.app)
    await phone.signIn('ada@example.com', smtp, send)
    test.clock.advance(1000)
    await laptop.signIn('ada@example.com', smtp, send)
    const url = `/customers/${ada.customer.id}/portal-sessions`
    const listed = await call(test.app, test.headers, 'GET', url, 200)
    assert.equal(listed.data.length, 2)
    const [newest, oldest] = listed.data
    assert.equal(newest.object, 'PortalSession')
    assert.equal(newest.customerId, ada.customer.id)
    assert.ok(newest.createdAt > oldest.createdAt)
    await call(test.app, test.headers, 'DELETE', `${url}/${oldest.id}`, 204)
    assert.equal((await phone.get('/portal/licenses')).statusCode, 303, 'the phone is signed out')
    assert.equal((await laptop.get('/portal/licenses')).statusCode, 200, 'the laptop is not')
    assert.equal((await call(test.app, test.headers, 'GET', url, 200)).data.length, 1)
    const productKey = await roleHeaders(test.app, test.headers, 'product', test.productId)
    await call(test.app, productKey, 'GET', url, 403)
    await call(test.app, test.headers, 'GET', '/customers/cus_nobody/portal-sessions', 404)
  })

  it('sets Secure cookies when the request came over HTTPS through a trusted proxy', async (t) => {
    const { smtp, test, send } = await portalApp(t, database, true)
    await owner(test, 'ada@example.com', 0)
    await new PortalVisitor(test.app).post('/portal/sign-in', { email: 'ada@example.com' })
    await send()
    const response = await test.app.inject({
      method: 'POST',
      url: '/portal/code',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
      payload: new URLSearchParams({
        email: 'ada@example.com',
        code: codeIn(smtp.received, 'ada@example.com'),
      }).toString(),
    })
    assert.equal(response.statusCode, 303, response.body)
    const cookies = [response.headers['set-cookie']].flat().map(String)
    assert.equal(cookies.length, 2)
    for (const cookie of cookies) {
      assert.match(cookie, /; Path=\/portal; HttpOnly; SameSite=(Lax|Strict); Secure$/)
    }
  })

  it('is not there while KEYTURN_PORTAL is off, and the portal link says why', async (t) => {
    const test = await buildTestApp(t, database)
    for (const url of ['/portal', '/portal/licenses', '/portal/assets/portal.css']) {
      assert.equal((await test.app.inject(url)).statusCode, 404, url)
    }
    const customer = await call(test.app, test.headers, 'POST', '/customers', 201, {
      email: 'ada@example.com',
    })
    const link = await call(test.app, test.headers, 'POST', `/customers/${customer.id}/portal-link`, 409)
    assert.equal(link.code, 'portal_unavailable')
  })
})
