import assert from 'node:assert/strict'
import { it } from 'node:test'
import { Secret, TOTP } from 'otpauth'
import { systemActor } from '../../core/unit-of-work.js'
import { buildTestApp, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'

const password = 'correct horse battery staple'

function cookieOf(setCookie: string | string[] | undefined): string {
  const value = Array.isArray(setCookie) ? setCookie[0] : setCookie
  assert.ok(value !== undefined, 'a Set-Cookie header')
  return value.split(';')[0] ?? ''
}

/** The code an authenticator app shows at the test clock's time. */
function codeAt(test: TestApp, secret: string): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: test.clock.now().getTime() })
}

async function signIn(test: TestApp, email: string) {
  const res = await test.app.inject({
    method: 'POST',
    url: '/operator/sign-in',
    payload: { email, password },
  })
  assert.equal(res.statusCode, 200, res.body)
  return res
}

async function session(test: TestApp, email: string) {
  const res = await signIn(test, email)
  return { cookie: cookieOf(res.headers['set-cookie']), csrf: res.json().csrfToken as string }
}

describeEachDatabase('Operator two-factor authentication over HTTP', (database) => {
  it('enrols with a QR code, then signs in with a code: pending step without a session, replay refused, recovery codes once each, lockout, disable', async (t) => {
    const test = await buildTestApp(t, database)
    const noSso = await test.app.inject({ method: 'GET', url: '/operator/oidc' })
    assert.equal(noSso.statusCode, 404, 'without KEYTURN_OIDC_ISSUER the dashboard offers no SSO')
    await test.services.operators.create(systemActor('keyturn'), {
      email: 'olga@example.com',
      name: 'Olga',
      role: 'owner',
      password,
    })
    const { cookie, csrf } = await session(test, 'olga@example.com')
    const headers = { cookie, 'x-keyturn-csrf': csrf }

    const noCsrf = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/totp',
      headers: { cookie },
      payload: {},
    })
    assert.equal(noCsrf.statusCode, 401, 'enrolment is a write: the CSRF header is required')
    const enrol = await test.app.inject({ method: 'POST', url: '/operator/2fa/totp', headers, payload: {} })
    assert.equal(enrol.statusCode, 201, enrol.body)
    const { secret, uri, qrCode } = enrol.json()
    assert.match(uri, /^otpauth:\/\/totp\/Keyturn:olga%40example\.com\?.*secret=/)
    assert.match(qrCode, /^data:image\/svg\+xml;base64,/)
    assert.match(Buffer.from(qrCode.split(',')[1], 'base64').toString(), /^<svg /)

    const wrongFirst = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/totp/confirm',
      headers,
      payload: { code: '000000' === codeAt(test, secret) ? '111111' : '000000' },
    })
    assert.equal(wrongFirst.statusCode, 401, wrongFirst.body)
    const firstCode = codeAt(test, secret)
    const confirm = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/totp/confirm',
      headers,
      payload: { code: firstCode },
    })
    assert.equal(confirm.statusCode, 200, confirm.body)
    const recoveryCodes: string[] = confirm.json().recoveryCodes
    assert.equal(recoveryCodes.length, 10)
    assert.equal(new Set(recoveryCodes).size, 10)
    const status = await test.app.inject({ method: 'GET', url: '/operator/2fa', headers: { cookie } })
    assert.deepEqual(status.json(), { totp: true, recoveryCodesLeft: 10, required: false })
    const again = await test.app.inject({ method: 'POST', url: '/operator/2fa/totp', headers, payload: {} })
    assert.equal(again.statusCode, 409)
    assert.equal(again.json().code, 'two_factor_enrolled')

    // The password alone now opens no session: a pending token, and no cookie.
    const first = await signIn(test, 'olga@example.com')
    assert.equal(first.headers['set-cookie'], undefined)
    const { secondFactor, pendingToken } = first.json()
    assert.equal(secondFactor, 'totp')
    assert.equal(first.json().csrfToken, undefined)
    const asKey = await test.app.inject({
      method: 'GET',
      url: '/api/v0/licenses',
      headers: { authorization: `Bearer ${pendingToken}` },
    })
    assert.equal(asKey.statusCode, 401, 'a pending sign-in opens nothing at /api/v0')

    const replay = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken, code: firstCode },
    })
    assert.equal(replay.statusCode, 401, 'the code that confirmed the enrolment is used up')
    test.clock.advance(30_000)
    const code = codeAt(test, secret)
    const verified = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken, code },
    })
    assert.equal(verified.statusCode, 200, verified.body)
    const fullCookie = cookieOf(verified.headers['set-cookie'])
    assert.equal(
      (await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie: fullCookie } }))
        .statusCode,
      200,
    )
    const used = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken, code },
    })
    assert.equal(used.statusCode, 401, 'a pending sign-in completes once')

    const second = (await signIn(test, 'olga@example.com')).json().pendingToken
    const sameCode = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken: second, code },
    })
    assert.equal(sameCode.statusCode, 401, 'a code is accepted once within its window')
    const byRecovery = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken: second, recoveryCode: recoveryCodes[0]?.toUpperCase() },
    })
    assert.equal(byRecovery.statusCode, 200, byRecovery.body)
    const third = (await signIn(test, 'olga@example.com')).json().pendingToken
    const recoveryAgain = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken: third, recoveryCode: recoveryCodes[0] },
    })
    assert.equal(recoveryAgain.statusCode, 401, 'a recovery code works once')
    for (let i = 0; i < 4; i++) {
      const res = await test.app.inject({
        method: 'POST',
        url: '/operator/2fa/verify',
        payload: { pendingToken: third, code: String(100000 + i) },
      })
      assert.equal(res.statusCode, 401)
    }
    test.clock.advance(30_000)
    const locked = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken: third, code: codeAt(test, secret) },
    })
    assert.equal(locked.statusCode, 429, 'five wrong codes lock the second step, even for the right one')
    assert.equal(locked.headers['retry-after'], '870')

    test.clock.advance(15 * 60_000)
    const fourth = (await signIn(test, 'olga@example.com')).json().pendingToken
    const back = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken: fourth, code: codeAt(test, secret) },
    })
    assert.equal(back.statusCode, 200, 'the lockout ends by itself')
    const now = { cookie: cookieOf(back.headers['set-cookie']), 'x-keyturn-csrf': back.json().csrfToken }
    test.clock.advance(30_000)
    const disable = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/totp/disable',
      headers: now,
      payload: { code: codeAt(test, secret) },
    })
    assert.equal(disable.statusCode, 204, disable.body)
    const plain = await signIn(test, 'olga@example.com')
    assert.ok(
      plain.headers['set-cookie'] !== undefined,
      'without a second factor the password is enough again',
    )
    for (const body of [enrol.body, confirm.body, verified.body, byRecovery.body]) {
      assert.doesNotMatch(body, new RegExp(password))
    }
  })

  it('an owner requires two factors: sessions of operators without one end and their next sign-in goes through enrolment', async (t) => {
    const test = await buildTestApp(t, database)
    await test.services.operators.create(systemActor('keyturn'), {
      email: 'olga@example.com',
      name: 'Olga',
      role: 'owner',
      password,
    })
    await test.services.operators.create(systemActor('keyturn'), {
      email: 'sam@example.com',
      name: 'Sam',
      role: 'support',
      password,
    })
    const owner = await session(test, 'olga@example.com')
    const ownerHeaders = { cookie: owner.cookie, 'x-keyturn-csrf': owner.csrf }
    const sam = await session(test, 'sam@example.com')

    const tooEarly = await test.app.inject({
      method: 'PUT',
      url: '/operator/2fa/requirement',
      headers: ownerHeaders,
      payload: { required: true },
    })
    assert.equal(tooEarly.statusCode, 409, 'an owner without a second factor cannot require one')
    assert.equal(tooEarly.json().code, 'two_factor_not_enrolled')
    const samTries = await test.app.inject({
      method: 'PUT',
      url: '/operator/2fa/requirement',
      headers: { cookie: sam.cookie, 'x-keyturn-csrf': sam.csrf },
      payload: { required: false },
    })
    assert.equal(samTries.statusCode, 403, 'only owners change the requirement')

    const { secret } = (
      await test.app.inject({ method: 'POST', url: '/operator/2fa/totp', headers: ownerHeaders, payload: {} })
    ).json()
    await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/totp/confirm',
      headers: ownerHeaders,
      payload: { code: codeAt(test, secret) },
    })
    const require = await test.app.inject({
      method: 'PUT',
      url: '/operator/2fa/requirement',
      headers: ownerHeaders,
      payload: { required: true },
    })
    assert.equal(require.statusCode, 200, require.body)
    assert.equal(require.json().required, true)
    const again = await test.app.inject({
      method: 'PUT',
      url: '/operator/2fa/requirement',
      headers: ownerHeaders,
      payload: { required: true },
    })
    assert.equal(again.statusCode, 200, 'requiring it again changes nothing')
    const ownerId = (
      await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie: owner.cookie } })
    ).json().operator.id
    const audit = (
      await test.app.inject({
        method: 'GET',
        url: '/api/v0/events?filter=type:in:operator_settings.updated|operator.session_ended',
        headers: { cookie: owner.cookie },
      })
    ).json().data
    assert.deepEqual(
      audit
        .map((event: { type: string; actor: object; data: Record<string, unknown> }) => [
          event.type,
          event.actor,
          event.type === 'operator.session_ended' ? [event.data.email, event.data.reason] : event.data,
        ])
        .sort((a: string[], b: string[]) => (String(a[0]) < String(b[0]) ? -1 : 1)),
      [
        [
          'operator.session_ended',
          { type: 'operator', id: ownerId },
          ['sam@example.com', 'twoFactorRequired'],
        ],
        [
          'operator_settings.updated',
          { type: 'operator', id: ownerId },
          { requireTwoFactor: true, previous: { requireTwoFactor: false }, sessionsEnded: 1 },
        ],
      ],
      'one settings event (not two), and Sam told why his session ended, both by the owner',
    )
    assert.equal(
      (await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie: sam.cookie } }))
        .statusCode,
      401,
      "Sam's session without a second factor ended",
    )
    assert.equal(
      (await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie: owner.cookie } }))
        .statusCode,
      200,
    )

    const pending = await signIn(test, 'sam@example.com')
    assert.equal(pending.headers['set-cookie'], undefined)
    assert.equal(pending.json().secondFactor, 'enrol')
    const { pendingToken } = pending.json()
    const wrongStage = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/verify',
      payload: { pendingToken, code: '123456' },
    })
    assert.equal(wrongStage.statusCode, 401, 'an operator sent to enrolment cannot skip it')
    const enrol = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/totp',
      payload: { pendingToken },
    })
    assert.equal(enrol.statusCode, 201, enrol.body)
    const done = await test.app.inject({
      method: 'POST',
      url: '/operator/2fa/totp/confirm',
      payload: { pendingToken, code: codeAt(test, enrol.json().secret) },
    })
    assert.equal(done.statusCode, 200, done.body)
    assert.equal(done.json().recoveryCodes.length, 10)
    assert.equal(done.json().operator.email, 'sam@example.com')
    const samCookie = cookieOf(done.headers['set-cookie'])
    assert.equal(
      (await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie: samCookie } }))
        .statusCode,
      200,
    )

    // Sam loses the authenticator and the recovery codes: an owner resets the second factor.
    const samId = done.json().operator.id
    const bySam = await test.app.inject({
      method: 'POST',
      url: `/operator/2fa/operators/${samId}/reset`,
      headers: { cookie: samCookie, 'x-keyturn-csrf': done.json().csrfToken },
    })
    assert.equal(bySam.statusCode, 403, 'only owners reset a second factor')
    const reset = await test.app.inject({
      method: 'POST',
      url: `/operator/2fa/operators/${samId}/reset`,
      headers: ownerHeaders,
    })
    assert.equal(reset.statusCode, 204, reset.body)
    assert.equal(
      (await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie: samCookie } }))
        .statusCode,
      401,
    )
    assert.equal((await signIn(test, 'sam@example.com')).json().secondFactor, 'enrol')
  })
})
