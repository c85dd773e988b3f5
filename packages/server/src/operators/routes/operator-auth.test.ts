import assert from 'node:assert/strict'
import { it } from 'node:test'
import { systemActor } from '../../core/unit-of-work.js'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'

const password = 'correct horse battery staple'

function cookieOf(setCookie: string | string[] | undefined): string {
  const value = Array.isArray(setCookie) ? setCookie[0] : setCookie
  assert.ok(value !== undefined, 'a Set-Cookie header')
  return value.split(';')[0] ?? ''
}

describeEachDatabase('Operator sign-in over HTTP', (database) => {
  it('sets up the owner by the link, signs out with the CSRF header, signs in again; no secret in the answers', async (t) => {
    const test = await buildTestApp(t, database)
    const token = await test.services.operators.setupTokenIfNoOperators()
    assert.ok(token !== undefined)

    const weak = await test.app.inject({
      method: 'POST',
      url: '/operator/setup',
      payload: { token, email: 'owner@example.com', name: 'Olga', password: 'password' },
    })
    assert.equal(weak.statusCode, 400, weak.body)
    assert.equal(weak.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.match(weak.json().detail ?? JSON.stringify(weak.json()), /12 characters/)

    const setup = await test.app.inject({
      method: 'POST',
      url: '/operator/setup',
      payload: { token, email: 'owner@example.com', name: 'Olga', password },
    })
    assert.equal(setup.statusCode, 201, setup.body)
    assert.match(
      String(setup.headers['set-cookie']),
      /^keyturn_operator_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax$/,
    )
    assert.equal(setup.headers['cache-control'], 'no-store')
    const { operator, csrfToken } = setup.json()
    assert.deepEqual([operator.role, operator.email], ['owner', 'owner@example.com'])
    assert.doesNotMatch(setup.body, new RegExp(`${password}|${token}`))
    const cookie = cookieOf(setup.headers['set-cookie'])

    const me = await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie } })
    assert.equal(me.statusCode, 200, me.body)
    assert.equal(me.json().operator.id, operator.id)

    const noCsrf = await test.app.inject({ method: 'POST', url: '/operator/sign-out', headers: { cookie } })
    assert.equal(noCsrf.statusCode, 401, 'a write without the CSRF header is refused')
    const out = await test.app.inject({
      method: 'POST',
      url: '/operator/sign-out',
      headers: { cookie, 'x-keyturn-csrf': csrfToken },
    })
    assert.equal(out.statusCode, 204, out.body)
    assert.equal(
      (await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie } })).statusCode,
      401,
    )

    const wrong = await test.app.inject({
      method: 'POST',
      url: '/operator/sign-in',
      payload: { email: 'owner@example.com', password: 'not the password' },
    })
    assert.equal(wrong.statusCode, 401, wrong.body)
    assert.equal(wrong.json().code, 'unauthenticated')
    const again = await test.app.inject({
      method: 'POST',
      url: '/operator/sign-in',
      headers: { 'x-forwarded-proto': 'https' },
      payload: { email: 'OWNER@example.com', password },
    })
    assert.equal(again.statusCode, 200, again.body)
    assert.doesNotMatch(
      String(again.headers['set-cookie']),
      /Secure/,
      'X-Forwarded-Proto is not believed without KEYTURN_TRUST_PROXY',
    )
  })

  it('locks an address out after repeated failures with 429 and Retry-After', async (t) => {
    const test = await buildTestApp(t, database)
    await test.services.operators.create(systemActor('keyturn'), {
      email: 'sam@example.com',
      name: 'Sam',
      role: 'support',
      password,
    })
    for (let i = 0; i < 5; i++) {
      const res = await test.app.inject({
        method: 'POST',
        url: '/operator/sign-in',
        payload: { email: 'sam@example.com', password: `wrong password ${i}` },
      })
      assert.equal(res.statusCode, 401)
    }
    const locked = await test.app.inject({
      method: 'POST',
      url: '/operator/sign-in',
      payload: { email: 'sam@example.com', password },
    })
    assert.equal(locked.statusCode, 429, locked.body)
    assert.equal(locked.headers['retry-after'], '900')
  })
})
