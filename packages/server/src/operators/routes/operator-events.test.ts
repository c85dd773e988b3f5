import assert from 'node:assert/strict'
import { it } from 'node:test'
import { Secret, TOTP } from 'otpauth'
import { buildTestApp, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { signedInOperator, testOperatorPassword } from '../../testing/operators.js'
import { storedRows } from '../../testing/stored-rows.js'

const newPassword = 'a brand new passphrase'

interface StoredEvent {
  readonly type: string
  readonly actor_type: string
  readonly actor_id: string
  readonly data: Record<string, unknown>
}

async function storedEvents(test: TestApp): Promise<StoredEvent[]> {
  return (await storedRows(test.connection.db, 'events')) as unknown as StoredEvent[]
}

describeEachDatabase('Operator management events', (database) => {
  it('records who invited, activated, changed, disabled, signed out, reset and changed factors of whom; never a secret', async (t) => {
    const test = await buildTestApp(t, database)
    const owner = await signedInOperator(test, 'owner')
    const inject = async (
      method: 'POST' | 'PATCH' | 'DELETE' | 'GET',
      url: string,
      headers: Record<string, string>,
      status: number,
      payload?: object,
    ) => {
      const res = await test.app.inject({
        method,
        url,
        headers,
        ...(payload === undefined ? {} : { payload }),
      })
      assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`)
      return res
    }
    const signIn = async (password: string) => {
      const res = await inject('POST', '/operator/sign-in', {}, 200, { email: 'sam@example.com', password })
      const cookie = String(res.headers['set-cookie']).split(';')[0] ?? ''
      return {
        cookie,
        token: cookie.split('=')[1] ?? '',
        write: { cookie, 'x-keyturn-csrf': res.json().csrfToken },
      }
    }

    const invited = await inject('POST', '/api/v0/operators', owner.write, 201, {
      email: 'sam@example.com',
      name: 'Sam',
      role: 'support',
    })
    const sam = invited.json().operator.id as string
    const invitation = String(invited.json().invitationUrl).split('#')[1] ?? ''
    await inject('POST', '/operator/invitation', {}, 200, {
      token: invitation,
      password: testOperatorPassword,
    })
    await inject('PATCH', `/api/v0/operators/${sam}`, owner.write, 200, { role: 'admin' })
    await inject('PATCH', `/api/v0/operators/${sam}`, owner.write, 200, { status: 'disabled' })
    await inject('PATCH', `/api/v0/operators/${sam}`, owner.write, 200, { status: 'active' })
    const first = await signIn(testOperatorPassword)
    await inject('DELETE', `/api/v0/operators/${sam}/sessions`, owner.write, 204)

    const second = await signIn(testOperatorPassword)
    const sessions = (await inject('GET', '/operator/sessions', { cookie: second.cookie }, 200)).json().data
    const enrol = await inject('POST', '/operator/2fa/totp', second.write, 201, {})
    const seed = enrol.json().secret as string
    const codeNow = () =>
      new TOTP({ secret: Secret.fromBase32(seed) }).generate({ timestamp: test.clock.now().getTime() })
    const confirmed = await inject('POST', '/operator/2fa/totp/confirm', second.write, 200, {
      code: codeNow(),
    })
    test.clock.advance(30_000)
    const regenerated = await inject('POST', '/operator/2fa/recovery-codes', second.write, 200, {
      code: codeNow(),
    })
    await inject('POST', `/operator/2fa/operators/${sam}/reset`, owner.write, 204)

    const reset = await inject('POST', `/api/v0/operators/${sam}/password-reset`, owner.write, 201)
    const resetToken = String(reset.json().resetUrl).split('#')[1] ?? ''
    await inject('POST', '/operator/password-reset', {}, 204, { token: resetToken, password: newPassword })
    const third = await signIn(newPassword)
    await inject('POST', '/operator/sign-out', third.write, 204)

    const events = (await storedEvents(test)).filter((event) => event.type.startsWith('operator.'))
    const said = events.map((event) => {
      const by = event.actor_id === owner.id ? 'owner' : event.actor_id === sam ? 'sam' : event.actor_type
      const about =
        event.data.id === sam ? 'sam' : event.data.id === owner.id ? 'owner' : String(event.data.id)
      const detail = event.data.previous ?? event.data.reason ?? event.data.by ?? event.data.status
      return `${event.type} of ${about} by ${by}: ${JSON.stringify(detail)}`
    })
    assert.deepEqual(said.sort(), [
      'operator.activated of sam by sam: "active"',
      'operator.created of owner by system: "active"',
      'operator.disabled of sam by owner: "disabled"',
      'operator.enabled of sam by owner: "active"',
      'operator.invited of sam by owner: "invited"',
      'operator.password_changed of sam by sam: "active"',
      'operator.password_reset_requested of sam by owner: "active"',
      'operator.recovery_codes_regenerated of sam by sam: "active"',
      'operator.session_ended of sam by owner: "revokedAll"',
      'operator.session_ended of sam by sam: "signedOut"',
      'operator.two_factor_disabled of sam by owner: "owner"',
      'operator.two_factor_enabled of sam by sam: "active"',
      'operator.updated of sam by owner: {"role":"support"}',
    ])
    const invitedEvent = events.find((event) => event.type === 'operator.invited')
    assert.deepEqual(
      [invitedEvent?.data.email, invitedEvent?.data.role, invitedEvent?.data.mailed],
      ['sam@example.com', 'support', false],
    )

    // No password, link, seed, recovery code, session cookie or session id in any stored event.
    const secrets = [
      testOperatorPassword,
      newPassword,
      invitation,
      resetToken,
      seed,
      ...confirmed.json().recoveryCodes,
      ...regenerated.json().recoveryCodes,
      first.token,
      second.token,
      third.token,
      owner.sessionId,
      ...sessions.map((session: { id: string }) => session.id),
    ]
    const everything = JSON.stringify(await storedEvents(test))
    for (const secret of secrets) {
      assert.ok(
        secret.length >= 8 && !everything.includes(secret),
        `an event holds a secret (${secret.length} chars)`,
      )
    }
  })
})
