import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { systemActor } from '../../core/unit-of-work.js'
import { buildTestApp, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { type OidcTestProvider, startOidcTestProvider } from '../../testing/oidc-test-provider.js'

const redirectUri = 'http://keyturn.test/operator/oidc/callback'
let provider: OidcTestProvider

before(async () => {
  provider = await startOidcTestProvider(redirectUri)
})
after(() => provider.close())

function cookieOf(setCookie: string | string[] | undefined, name: string): string {
  const all = Array.isArray(setCookie) ? setCookie : setCookie === undefined ? [] : [setCookie]
  const line = all.find((value) => value.startsWith(`${name}=`))
  assert.ok(line !== undefined, `a Set-Cookie header for ${name}`)
  return line.split(';')[0] ?? ''
}

async function app(t: Parameters<typeof buildTestApp>[0], database: Parameters<typeof buildTestApp>[1]) {
  return buildTestApp(t, database, {
    oidc: {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      domains: ['example.com'],
      role: 'viewer',
      redirectUri,
      fetch: provider.fetch,
    },
  })
}

/** The browser's trip: Keyturn's start, the provider (signed in as whoever the test set), Keyturn's callback. */
async function begin(test: TestApp) {
  const start = await test.app.inject({ method: 'GET', url: '/operator/oidc/start' })
  assert.equal(start.statusCode, 302, start.body)
  const location = String(start.headers.location)
  const authorization = new URL(location)
  assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256')
  assert.ok(authorization.searchParams.get('nonce'))
  assert.match(
    String(start.headers['set-cookie']),
    /^keyturn_oidc_request=[^;]+; Max-Age=600; Path=\/operator\/oidc; HttpOnly; SameSite=Lax$/,
  )
  return { location, cookie: cookieOf(start.headers['set-cookie'], 'keyturn_oidc_request') }
}

async function callback(test: TestApp, backTo: string, cookie: string) {
  assert.ok(backTo.startsWith(`${redirectUri}?`), backTo)
  const url = new URL(backTo)
  return test.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { cookie } })
}

async function ssoSignIn(test: TestApp) {
  const { location, cookie } = await begin(test)
  return callback(test, await provider.authorize(location), cookie)
}

describeEachDatabase(
  'Operator single sign-on with OpenID Connect (a real provider over HTTPS)',
  (database) => {
    it('makes an account on the first sign-in with the default role and links the identity by issuer and subject; an address of an existing account is not taken over', async (t) => {
      const test = await app(t, database)
      const offered = await test.app.inject({ method: 'GET', url: '/operator/oidc' })
      assert.deepEqual(
        [offered.statusCode, offered.json()],
        [200, { enabled: true }],
        'the dashboard offers SSO',
      )
      provider.signInAs({ sub: 'alice-1', email: 'alice@example.com', email_verified: true, name: 'Alice' })
      const first = await ssoSignIn(test)
      assert.equal(first.statusCode, 303, first.body)
      assert.equal(first.headers.location, '/dashboard/')
      const cookie = cookieOf(first.headers['set-cookie'], 'keyturn_operator_session')
      const me = await test.app.inject({ method: 'GET', url: '/operator/me', headers: { cookie } })
      assert.equal(me.statusCode, 200, me.body)
      const alice = me.json().operator
      assert.deepEqual(
        [alice.email, alice.name, alice.role, alice.status],
        ['alice@example.com', 'Alice', 'viewer', 'active'],
      )

      // The provider now says another address for the same subject: still the same operator.
      provider.signInAs({ sub: 'alice-1', email: 'alice.new@example.com', email_verified: true })
      const again = await ssoSignIn(test)
      assert.equal(again.statusCode, 303, again.body)
      const second = await test.app.inject({
        method: 'GET',
        url: '/operator/me',
        headers: { cookie: cookieOf(again.headers['set-cookie'], 'keyturn_operator_session') },
      })
      assert.equal(second.json().operator.id, alice.id)
      assert.equal((await test.services.operators.list()).length, 1)
      const created = await test.app.inject({
        method: 'GET',
        url: '/api/v0/events?filter=type:eq:operator.sso_account_created',
        headers: test.headers,
      })
      assert.deepEqual(
        created
          .json()
          .data.map((event: { actor: object; data: { email: string; role: string } }) => [
            event.actor,
            event.data.email,
            event.data.role,
          ]),
        [[{ type: 'operator', id: alice.id }, 'alice@example.com', 'viewer']],
        'one account made, recorded once, by the operator signing on',
      )

      await test.services.operators.create(systemActor('keyturn'), {
        email: 'bob@example.com',
        name: 'Bob',
        role: 'owner',
        password: 'correct horse battery staple',
      })
      provider.signInAs({ sub: 'someone-else', email: 'BOB@example.com', email_verified: true })
      const takeover = await ssoSignIn(test)
      assert.equal(takeover.statusCode, 403, takeover.body)
      assert.equal(takeover.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.match(takeover.json().detail, /exists already and is not linked/)
      assert.doesNotMatch(String(takeover.headers['set-cookie']), /keyturn_operator_session/)
      assert.equal((await test.services.operators.list()).length, 2)
    })

    it('refuses an unverified address, a domain not allowed, and a callback whose state is not the browser’s', async (t) => {
      const test = await app(t, database)
      provider.signInAs({ sub: 'u-1', email: 'carol@example.com', email_verified: false })
      const unverified = await ssoSignIn(test)
      assert.equal(unverified.statusCode, 403, unverified.body)
      assert.match(unverified.json().detail, /not verified/)

      provider.signInAs({ sub: 'u-2', email: 'dave@elsewhere.org', email_verified: true })
      const otherDomain = await ssoSignIn(test)
      assert.equal(otherDomain.statusCode, 403, otherDomain.body)
      assert.match(otherDomain.json().detail, /example\.com/)

      provider.signInAs({ sub: 'u-3', email: 'erin@example.com', email_verified: true })
      const mine = await begin(test)
      const theirs = await begin(test)
      const backTo = await provider.authorize(theirs.location)
      const mismatch = await callback(test, backTo, mine.cookie)
      assert.equal(mismatch.statusCode, 401, mismatch.body)
      const noCookie = await callback(test, backTo, '')
      assert.equal(noCookie.statusCode, 401, noCookie.body)
      const url = new URL(backTo)
      const inBrowser = await test.app.inject({
        method: 'GET',
        url: `${url.pathname}${url.search}`,
        headers: { accept: 'text/html,application/xhtml+xml' },
      })
      assert.equal(inBrowser.statusCode, 303, 'a browser is sent back to the sign-in page')
      assert.equal(inBrowser.headers.location, '/dashboard/?sso-error=unauthenticated')
      assert.equal((await test.services.operators.list()).length, 0, 'no account was made')
      const right = await callback(test, backTo, theirs.cookie)
      assert.equal(right.statusCode, 303, right.body)
    })
  },
)
