import assert from 'node:assert/strict'
import { it } from 'node:test'
import { DomainError } from '../core/errors.js'
import { systemActor } from '../core/unit-of-work.js'
import { KyselySessionStore } from '../sessions/kysely-session-store.js'
import { SessionService } from '../sessions/session-service.js'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { operatorStorage } from './kysely-operator-storage.js'
import { KyselyOperatorStore } from './kysely-operator-store.js'
import { OperatorService } from './operator-service.js'

const minute = 60_000
const cli = systemActor('keyturn')
const base = 'https://licenses.example.com'
const password = 'correct horse battery staple'

function failsWith(code: string) {
  return (error: unknown) => error instanceof DomainError && error.code === code
}

describeEachDatabase('Operators', (database) => {
  async function service(t: { after(f: () => unknown): void }) {
    const test = await buildTestApp(t, database)
    const sessions = new SessionService({
      store: new KyselySessionStore(test.connection.db),
      clock: test.clock,
    })
    const operators = new OperatorService({
      store: new KyselyOperatorStore(test.connection.db),
      storage: operatorStorage({ db: test.connection.db, clock: test.clock }),
      sessions,
      clock: test.clock,
    })
    return { test, operators }
  }

  it('creates the first owner through the one-time setup link, storing an Argon2id hash only', async (t) => {
    const { test, operators } = await service(t)
    const stale = await operators.setupTokenIfNoOperators()
    const token = await operators.setupTokenIfNoOperators()
    assert.ok(stale !== undefined && token !== undefined)
    await assert.rejects(
      operators.completeSetup(stale, { email: 'owner@example.com', name: 'Olga', password }),
      failsWith('unauthenticated'),
      'a newer start made the older link stop working',
    )
    await assert.rejects(
      operators.completeSetup(token, { email: 'owner@example.com', name: 'Olga', password: 'short' }),
      failsWith('validation_failed'),
    )
    await assert.rejects(
      operators.completeSetup(token, { email: 'owner@example.com', name: 'Olga', password: 'Password1234' }),
      (error: unknown) => error instanceof DomainError && /commonly used/.test(error.message),
    )
    const owner = await operators.completeSetup(token, { email: 'Owner@Example.com', name: 'Olga', password })
    assert.deepEqual([owner.role, owner.status, owner.email], ['owner', 'active', 'Owner@Example.com'])
    await assert.rejects(
      operators.completeSetup(token, { email: 'other@example.com', name: 'Eve', password }),
      failsWith('unauthenticated'),
      'the link works once',
    )
    assert.equal(await operators.setupTokenIfNoOperators(), undefined)

    const rows = await test.connection.db
      .selectFrom('operators' as never)
      .selectAll()
      .execute()
    const stored = JSON.stringify(rows)
    assert.match(stored, /\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    assert.doesNotMatch(stored, new RegExp(password))
    const tokens = JSON.stringify(
      await test.connection.db
        .selectFrom('operator_tokens' as never)
        .selectAll()
        .execute(),
    )
    assert.doesNotMatch(tokens, new RegExp(token))
  })

  it('signs in with the password, one answer for every failure, and locks out for a bounded time', async (t) => {
    const { test, operators } = await service(t)
    await operators.create(cli, { email: 'sam@example.com', name: 'Sam', role: 'support', password })

    assert.deepEqual(await operators.signIn('nobody@example.com', password, '192.0.2.1'), { kind: 'refused' })
    assert.deepEqual(await operators.signIn('sam@example.com', 'wrong password!', '192.0.2.1'), {
      kind: 'refused',
    })
    const signedIn = await operators.signIn('SAM@example.com', password, '192.0.2.1')
    assert.ok(signedIn.kind === 'signedIn')
    const who = await operators.authenticate(signedIn.started.token)
    assert.deepEqual([who?.operator.email, who?.operator.role], ['sam@example.com', 'support'])

    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await operators.signIn('sam@example.com', `wrong ${i} password`, '192.0.2.1'), {
        kind: 'refused',
      })
    }
    const locked = await operators.signIn('sam@example.com', password, '192.0.2.1')
    assert.equal(locked.kind, 'rate_limited', 'even the right password waits out the lockout')
    test.clock.advance(15 * minute)
    assert.equal((await operators.signIn('sam@example.com', password, '192.0.2.1')).kind, 'signedIn')
  })

  it('invites by a one-time link, then the operator chooses a password', async (t) => {
    const { operators } = await service(t)
    const { operator, invitation } = await operators.create(
      cli,
      {
        email: 'ada@example.com',
        name: 'Ada',
        role: 'admin',
      },
      base,
    )
    assert.equal(operator.status, 'invited')
    const invitationToken = invitation?.token ?? ''
    assert.equal(invitation?.url, `https://licenses.example.com/dashboard/invitation#${invitationToken}`)
    assert.equal(invitation?.mailed, false, 'no mail without templates')
    await assert.rejects(
      operators.create(cli, { email: 'ADA@example.com', name: 'Ada again', role: 'viewer' }),
      failsWith('operator_email_taken'),
    )
    assert.deepEqual(await operators.signIn('ada@example.com', password, '192.0.2.2'), { kind: 'refused' })
    assert.equal((await operators.acceptInvitation(invitationToken, password)).status, 'active')
    await assert.rejects(operators.acceptInvitation(invitationToken, password), failsWith('unauthenticated'))
    assert.equal((await operators.signIn('ada@example.com', password, '192.0.2.2')).kind, 'signedIn')
  })

  it('resets a password by a link that lasts an hour and ends every session', async (t) => {
    const { test, operators } = await service(t)
    const { operator: vic } = await operators.create(cli, {
      email: 'vic@example.com',
      name: 'Vic',
      role: 'viewer',
      password,
    })
    const before = await operators.signIn('vic@example.com', password, '192.0.2.3')
    assert.ok(before.kind === 'signedIn')

    const late = await operators.passwordResetFor(cli, vic.id, base)
    test.clock.advance(61 * minute)
    await assert.rejects(
      operators.resetPassword(late.token, 'a brand new passphrase'),
      failsWith('unauthenticated'),
    )

    const reset = await operators.passwordResetFor(cli, vic.id, base)
    await operators.resetPassword(reset.token, 'a brand new passphrase')
    assert.equal(await operators.authenticate(before.started.token), undefined)
    assert.deepEqual(await operators.signIn('vic@example.com', password, '192.0.2.3'), { kind: 'refused' })
    assert.equal(
      (await operators.signIn('vic@example.com', 'a brand new passphrase', '192.0.2.3')).kind,
      'signedIn',
    )
  })

  it('keeps one active owner: the last cannot be demoted or disabled', async (t) => {
    const { operators } = await service(t)
    const { operator: owner } = await operators.create(cli, {
      email: 'o@example.com',
      name: 'O',
      role: 'owner',
      password,
    })
    await assert.rejects(operators.update(cli, owner.id, { role: 'admin' }), failsWith('forbidden'))
    await assert.rejects(operators.update(cli, owner.id, { status: 'disabled' }), failsWith('forbidden'))
    const { operator: second } = await operators.create(cli, {
      email: 'p@example.com',
      name: 'P',
      role: 'owner',
      password,
    })
    assert.equal((await operators.update(cli, owner.id, { role: 'admin' })).role, 'admin')
    await assert.rejects(operators.update(cli, second.id, { status: 'disabled' }), failsWith('forbidden'))
    await assert.rejects(
      operators.update(cli, 'opr_missing', { role: 'viewer' }),
      failsWith('operator_not_found'),
    )
  })
})
