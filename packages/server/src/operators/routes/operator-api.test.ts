import assert from 'node:assert/strict'
import { it } from 'node:test'
import { systemActor } from '../../core/unit-of-work.js'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { signedInOperator } from '../../testing/operators.js'

const problemJson = 'application/problem+json; charset=utf-8'

describeEachDatabase('The API with an operator session', (database) => {
  it('takes the operator cookie beside API keys; writes need the CSRF header; both credentials at once are a 400', async (t) => {
    const test = await buildTestApp(t, database, { corsOrigins: ['https://app.example.com'] })
    const owner = await signedInOperator(test, 'owner')

    const list = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: owner.read })
    assert.equal(list.statusCode, 200, list.body)
    const underV0 = await test.app.inject({ method: 'GET', url: '/v0/products', headers: owner.read })
    assert.equal(underV0.statusCode, 200, underV0.body)

    const noCsrf = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: owner.read,
      payload: { productId: test.productId },
    })
    assert.equal(noCsrf.statusCode, 403, noCsrf.body)
    assert.equal(noCsrf.headers['content-type'], problemJson)
    assert.match(noCsrf.json().detail, /X-Keyturn-Csrf/)
    const wrongCsrf = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: { ...owner.write, 'x-keyturn-csrf': 'not-the-token' },
      payload: { productId: test.productId },
    })
    assert.equal(wrongCsrf.statusCode, 403, wrongCsrf.body)

    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: owner.write,
      payload: { productId: test.productId },
    })
    assert.equal(created.statusCode, 201, created.body)
    const events = await test.app.inject({
      method: 'GET',
      url: '/api/v0/events?filter=type:eq:license.created',
      headers: test.headers,
    })
    assert.deepEqual(events.json().data[0].actor, { type: 'operator', id: owner.id })

    const both = await test.app.inject({
      method: 'GET',
      url: '/api/v0/licenses',
      headers: { ...owner.read, ...test.headers },
    })
    assert.equal(both.statusCode, 400, both.body)
    assert.equal(both.headers['content-type'], problemJson)
    assert.match(both.json().detail, /both an Authorization header and the operator session cookie/)

    const replayable = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: { ...owner.write, 'idempotency-key': 'k1' },
      payload: { productId: test.productId },
    })
    assert.equal(replayable.statusCode, 400, replayable.body)
    assert.match(replayable.json().detail, /Idempotency-Key is kept per API key/)

    const preflight = await test.app.inject({
      method: 'OPTIONS',
      url: '/api/v0/licenses',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-keyturn-csrf',
      },
    })
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com')
    assert.equal(preflight.headers['access-control-allow-credentials'], undefined)
    assert.doesNotMatch(String(preflight.headers['access-control-allow-headers']), /csrf/i)
  })

  it('never takes a customer portal session, an ended session, or a disabled operator', async (t) => {
    const test = await buildTestApp(t, database)
    const customer = await test.app.inject({
      method: 'POST',
      url: '/api/v0/customers',
      headers: test.headers,
      payload: { email: 'buyer@example.com' },
    })
    const portal = await test.services.sessions.start('customer', customer.json().id)
    for (const cookie of [
      `keyturn_portal_session=${portal.token}`,
      `keyturn_operator_session=${portal.token}`,
    ]) {
      const res = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: { cookie } })
      assert.equal(res.statusCode, 401, `${cookie}: ${res.body}`)
      assert.equal(res.headers['content-type'], problemJson)
    }

    const signedOut = await signedInOperator(test, 'admin')
    const out = await test.app.inject({ method: 'POST', url: '/operator/sign-out', headers: signedOut.write })
    assert.equal(out.statusCode, 204, out.body)
    const ended = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: signedOut.read })
    assert.equal(ended.statusCode, 401, ended.body)
    assert.match(ended.json().detail, /sign in again/)

    const disabled = await signedInOperator(test, 'admin')
    await test.services.operators.update(systemActor('keyturn'), disabled.id, { status: 'disabled' })
    const refused = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: disabled.read })
    assert.equal(refused.statusCode, 401, refused.body)
  })

  it('lists and ends its own sessions; an owner ends anyone’s; an ended session is refused at once', async (t) => {
    const test = await buildTestApp(t, database)
    const owner = await signedInOperator(test, 'owner')
    const laptop = await signedInOperator(test, 'support')
    const phone = await test.services.sessions.start('operator', laptop.id)
    const phoneCookie = { cookie: `keyturn_operator_session=${phone.token}` }

    const own = await test.app.inject({ method: 'GET', url: '/operator/sessions', headers: laptop.read })
    assert.equal(own.statusCode, 200, own.body)
    assert.deepEqual(
      own
        .json()
        .data.map((s: { id: string; current: boolean }) => [s.id, s.current])
        .sort(),
      [
        [laptop.sessionId, true],
        [phone.session.id, false],
      ].sort(),
    )
    assert.doesNotMatch(own.body, new RegExp(`${phone.token}|${phone.csrfToken}`))

    const noCsrf = await test.app.inject({
      method: 'DELETE',
      url: `/operator/sessions/${phone.session.id}`,
      headers: laptop.read,
    })
    assert.equal(noCsrf.statusCode, 401, noCsrf.body)
    const others = await test.app.inject({
      method: 'DELETE',
      url: `/operator/sessions/${owner.sessionId}`,
      headers: laptop.write,
    })
    assert.equal(others.statusCode, 404, 'another operator’s session is not its own')
    assert.equal(others.json().code, 'operator_session_not_found')
    const ended = await test.app.inject({
      method: 'DELETE',
      url: `/operator/sessions/${phone.session.id}`,
      headers: laptop.write,
    })
    assert.equal(ended.statusCode, 204, ended.body)
    const phoneAfter = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: phoneCookie })
    assert.equal(phoneAfter.statusCode, 401, phoneAfter.body)

    const listed = await test.app.inject({
      method: 'GET',
      url: `/api/v0/operators/${laptop.id}/sessions`,
      headers: owner.read,
    })
    assert.deepEqual(
      listed.json().data.map((s: { id: string }) => s.id),
      [laptop.sessionId],
    )
    const everywhere = await test.app.inject({
      method: 'DELETE',
      url: `/api/v0/operators/${laptop.id}/sessions`,
      headers: owner.write,
    })
    assert.equal(everywhere.statusCode, 204, everywhere.body)
    const laptopAfter = await test.app.inject({
      method: 'GET',
      url: '/api/v0/licenses',
      headers: laptop.read,
    })
    assert.equal(laptopAfter.statusCode, 401, laptopAfter.body)
    const ownerStill = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: owner.read })
    assert.equal(ownerStill.statusCode, 200, ownerStill.body)
  })

  it('an owner hands a forgotten password a one-time reset link; using it ends the old sessions', async (t) => {
    const test = await buildTestApp(t, database)
    const owner = await signedInOperator(test, 'owner')
    const forgetful = await signedInOperator(test, 'viewer')

    const link = await test.app.inject({
      method: 'POST',
      url: `/api/v0/operators/${forgetful.id}/password-reset`,
      headers: owner.write,
    })
    assert.equal(link.statusCode, 201, link.body)
    const { resetUrl } = link.json()
    assert.match(resetUrl, /^http:\/\/localhost(:\d+)?\/dashboard\/password-reset#[\w-]{43}$/)
    const byViewer = await test.app.inject({
      method: 'POST',
      url: `/api/v0/operators/${owner.id}/password-reset`,
      headers: forgetful.write,
    })
    assert.equal(byViewer.statusCode, 403, byViewer.body)

    const token = resetUrl.split('#')[1]
    const reset = await test.app.inject({
      method: 'POST',
      url: '/operator/password-reset',
      payload: { token, password: 'a brand new long passphrase' },
    })
    assert.equal(reset.statusCode, 204, reset.body)
    const old = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: forgetful.read })
    assert.equal(old.statusCode, 401, 'the sessions from before the reset ended')
    const again = await test.app.inject({
      method: 'POST',
      url: '/operator/password-reset',
      payload: { token, password: 'another long passphrase here' },
    })
    assert.equal(again.statusCode, 401, 'the link works once')
    const signIn = await test.app.inject({
      method: 'POST',
      url: '/operator/sign-in',
      payload: { email: forgetful.email, password: 'a brand new long passphrase' },
    })
    assert.equal(signIn.statusCode, 200, signIn.body)
  })
})
