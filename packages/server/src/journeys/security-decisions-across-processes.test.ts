import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { ProductId } from '@keyturn/protocol'
import { apiRoutes, injectOverHttp, requestFor, seedRouteFixture } from '../testing/api-routes.js'
import { describeEachServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_no-stale-security-decision-000001'

interface Answer {
  readonly status: number
  readonly body: Record<string, unknown>
}

async function call(
  base: string,
  secret: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${base}/api/v0${path}`, {
    method,
    headers: {
      authorization: `Bearer ${secret}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) }
}

// The rule (docs/decisions/0016-api-key-confirmation.md): once the request that changed a security decision has returned, no process sharing
// the database answers as if it had not happened. Guards any cache on the authentication or validation path.
describeEachServerEnvironment(
  'Security decisions across two server processes on one database',
  (environment) => {
    it('refuses a deleted key and reports a revoked or suspended license on the other process at once when both are busy', async (t) => {
      const env = { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey }
      const [a, b] = await Promise.all([startServerProcess(t, env), startServerProcess(t, env)])
      const product = await call(a.url, adminKey, 'POST', '/products', { name: 'Shared' })
      const productId = String(product.body.id) as ProductId
      const productKey = async (name: string) => {
        const created = await call(a.url, adminKey, 'POST', '/api-keys', { name, role: 'product', productId })
        assert.equal(created.status, 201)
        return { id: String(created.body.id), secret: String(created.body.secret) }
      }
      // Product keys, each for one way B may meet a key it has read before and A then deletes.
      const keys = await Promise.all(['known license', 'unknown license', 'idempotent retry'].map(productKey))
      // And one for each route that confirms its key in its own SQL instead of reading it apart: the
      // catalogue says which, so a route added with that mark is covered here without a list.
      const fixture = await seedRouteFixture(
        injectOverHttp(a.url),
        { authorization: `Bearer ${adminKey}` },
        productId,
      )
      const confirming = await Promise.all(
        apiRoutes
          .filter((route) => route.confirmsApiKey === true)
          .map(async (route) => ({ route, key: await productKey(`${route.method} ${route.path}`) })),
      )
      assert.ok(confirming.length >= 10, 'the catalogue marks the routes that confirm their key')
      const onB = injectOverHttp(b.url)
      const send = ({ route, key }: (typeof confirming)[number]) =>
        onB.inject({
          ...requestFor(route, '/api/v0', fixture),
          headers: { authorization: `Bearer ${key.secret}` },
        })
      const license = await call(a.url, adminKey, 'POST', '/licenses', { productId })
      const validate = (base: string, secret: string, key = license.body.key, headers = {}) =>
        call(base, secret, 'POST', '/licenses/validate', { key, productId }, headers)

      // Both processes keep answering while the changes happen (warms any cache).
      let hammering = true
      const hammer = (async () => {
        while (hammering) {
          await Promise.all([validate(a.url, adminKey), validate(b.url, adminKey)])
        }
      })()
      try {
        const retry = { 'idempotency-key': 'validate-once' }
        for (const key of keys) {
          assert.equal((await validate(b.url, key.secret)).status, 200)
        }
        for (const each of confirming) {
          const answer = await send(each)
          assert.ok(answer.statusCode < 300, `${each.route.method} ${each.route.path} on B: ${answer.body}`)
        }
        assert.equal((await validate(b.url, keys[2]?.secret ?? '', license.body.key, retry)).status, 200)

        for (const key of [...keys, ...confirming.map((each) => each.key)]) {
          assert.equal((await call(a.url, adminKey, 'DELETE', `/api-keys/${key.id}`)).status, 204)
        }
        // B read each key before: each is refused at once, for a known license key and an unknown
        // one, on every route that confirms its key in its own statement; a kept answer is not
        // replayed; and again once B has forgotten the key.
        const refusals = [
          await validate(b.url, keys[0]?.secret ?? ''),
          await validate(b.url, keys[1]?.secret ?? '', 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE'),
          await validate(b.url, keys[2]?.secret ?? '', license.body.key, retry),
          await validate(b.url, keys[0]?.secret ?? ''),
        ]
        assert.deepEqual(
          refusals.map((refused) => [refused.status, refused.body.code]),
          Array.from({ length: 4 }, () => [401, 'unauthenticated']),
        )
        const routeRefusals = []
        for (const each of confirming) {
          const answer = await send(each)
          routeRefusals.push(
            `${each.route.method} ${each.route.path}: ${answer.statusCode} ${answer.json().code}`,
          )
        }
        assert.deepEqual(
          routeRefusals,
          confirming.map(({ route }) => `${route.method} ${route.path}: 401 unauthenticated`),
        )

        assert.equal((await call(a.url, adminKey, 'POST', `/licenses/${license.body.id}/revoke`)).status, 200)
        const revoked = await validate(b.url, adminKey)
        assert.deepEqual([revoked.body.isValid, revoked.body.reason], [false, 'revoked'])

        await call(a.url, adminKey, 'POST', `/licenses/${license.body.id}/reinstate`)
        assert.equal((await call(a.url, adminKey, 'POST', `/products/${productId}/suspend`)).status, 200)
        const suspended = await validate(b.url, adminKey)
        assert.deepEqual([suspended.body.isValid, suspended.body.reason], [false, 'suspended'])
      } finally {
        hammering = false
        await hammer
      }
    })
  },
)
