import assert from 'node:assert/strict'
import { it } from 'node:test'
import Fastify from 'fastify'
import { isSecureRequest, readSessionCookie, sessionCookie } from '../http/session-cookie.js'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { FixedClock } from '../testing/fixed-clock.js'
import { KyselySessionStore } from './kysely-session-store.js'
import { audienceDefaults } from './session.js'
import { SessionService } from './session-service.js'
import { SignInLimits } from './sign-in-limits.js'

const minute = 60_000

describeEachDatabase('Sessions', (database) => {
  async function service(t: { after(f: () => unknown): void }) {
    const test = await buildTestApp(t, database)
    const sessions = new SessionService({
      store: new KyselySessionStore(test.connection.db),
      clock: test.clock,
      settings: { operator: { idleTimeoutMs: 30 * minute, absoluteTimeoutMs: 60 * minute } },
    })
    return { test, sessions }
  }

  it('stores digests only, checks the CSRF token, and keeps audiences apart', async (t) => {
    const { test, sessions } = await service(t)
    const started = await sessions.start('operator', 'op_1')
    const rows = await test.connection.db
      .selectFrom('sessions' as never)
      .selectAll()
      .execute()
    assert.equal(rows.length, 1)
    assert.doesNotMatch(JSON.stringify(rows), new RegExp(`${started.token}|${started.csrfToken}`))

    assert.equal((await sessions.authenticate('operator', started.token))?.subjectId, 'op_1')
    assert.equal(await sessions.authenticate('customer', started.token), undefined)
    assert.equal(await sessions.authenticate('operator', 'not-a-session'), undefined)
    assert.equal(await sessions.authenticate('operator', 'x'.repeat(10_000)), undefined)

    assert.equal(await sessions.csrfMatches(started.token, started.csrfToken), true)
    assert.equal(await sessions.csrfMatches(started.token, undefined), false)
    const tampered = `${started.csrfToken.slice(0, -1)}${started.csrfToken.endsWith('A') ? 'B' : 'A'}`
    assert.equal(await sessions.csrfMatches(started.token, tampered), false)
    const other = await sessions.start('operator', 'op_2')
    assert.equal(await sessions.csrfMatches(started.token, other.csrfToken), false)
  })

  it('ends a session at its idle expiry, moved on by use, and at its absolute expiry', async (t) => {
    const { test, sessions } = await service(t)
    const idle = await sessions.start('operator', 'op_1')
    test.clock.advance(30 * minute)
    assert.equal(await sessions.authenticate('operator', idle.token), undefined)

    const used = await sessions.start('operator', 'op_1')
    for (let i = 0; i < 3; i++) {
      test.clock.advance(20 * minute - 1)
      assert.ok(await sessions.authenticate('operator', used.token), `use ${i}`)
    }
    test.clock.advance(3)
    assert.equal(await sessions.authenticate('operator', used.token), undefined, 'absolute expiry')
  })

  it('revokes one session, or all of a subject but one', async (t) => {
    const { sessions } = await service(t)
    const a = await sessions.start('operator', 'op_1')
    const b = await sessions.start('operator', 'op_1')
    const c = await sessions.start('operator', 'op_1')
    const elsewhere = await sessions.start('operator', 'op_2')
    assert.equal(await sessions.revoke('customer', a.session.id), false)
    assert.equal(await sessions.revoke('operator', a.session.id), true)
    assert.equal(await sessions.authenticate('operator', a.token), undefined)
    assert.equal((await sessions.listOf('operator', 'op_1')).length, 2)
    assert.equal(await sessions.revokeAllOf('operator', 'op_1', c.session.id), 1)
    assert.equal(await sessions.authenticate('operator', b.token), undefined)
    assert.ok(await sessions.authenticate('operator', c.token))
    assert.ok(await sessions.authenticate('operator', elsewhere.token))
  })
})

it('sets Secure over HTTPS, and behind a trusted proxy by X-Forwarded-Proto only', async (t) => {
  const operator = audienceDefaults.operator
  async function cookieOf(trustProxy: boolean, headers: Record<string, string>) {
    const app = Fastify({ trustProxy })
    t.after(() => app.close())
    app.get('/sign-in', (request, reply) => {
      reply.header('set-cookie', sessionCookie(operator, 'tok', isSecureRequest(request))).send({})
    })
    return String((await app.inject({ url: '/sign-in', headers })).headers['set-cookie'])
  }
  assert.doesNotMatch(await cookieOf(false, {}), /Secure/)
  assert.doesNotMatch(await cookieOf(false, { 'x-forwarded-proto': 'https' }), /Secure/)
  const behindProxy = await cookieOf(true, { 'x-forwarded-proto': 'https' })
  assert.match(behindProxy, /^keyturn_operator_session=tok; Path=\/; HttpOnly; SameSite=Lax; Secure$/)

  assert.equal(readSessionCookie(operator, 'a=1; keyturn_operator_session=tok'), 'tok')
  assert.equal(readSessionCookie(operator, 'keyturn_portal_session=tok'), undefined)
  assert.equal(readSessionCookie(audienceDefaults.customer, 'keyturn_operator_session=tok'), undefined)
  assert.notEqual(audienceDefaults.customer.cookiePath, audienceDefaults.operator.cookiePath)
})

it('locks an account and an address after repeated failures, for a bounded time', () => {
  const clock = new FixedClock()
  const limits = new SignInLimits(clock, {
    accountFailures: 3,
    ipFailures: 5,
    windowMs: 10 * minute,
    lockoutMs: 15 * minute,
  })
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(limits.check('Ada@example.com', '192.0.2.1'), { allowed: true })
    limits.recordFailure('ada@example.com', '192.0.2.1')
  }
  assert.deepEqual(limits.check('ADA@example.com', '192.0.2.9'), {
    allowed: false,
    retryAfterMs: 15 * minute,
  })
  assert.deepEqual(limits.check('bob@example.com', '192.0.2.1'), { allowed: true })
  limits.recordFailure('bob@example.com', '192.0.2.1')
  limits.recordFailure('eve@example.com', '192.0.2.1')
  assert.equal(limits.check('carol@example.com', '192.0.2.1').allowed, false, 'the address is locked out')
  clock.advance(15 * minute)
  assert.deepEqual(limits.check('ada@example.com', '192.0.2.9'), { allowed: true })
  assert.deepEqual(limits.check('carol@example.com', '192.0.2.1'), { allowed: true })
})
