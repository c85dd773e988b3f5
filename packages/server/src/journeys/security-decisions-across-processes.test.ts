import assert from 'node:assert/strict'
import { it } from 'node:test'
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
      const productId = String(product.body.id)
      // Product keys, each for one way B may meet a key it has read before and A then deletes.
      const keys = await Promise.all(
        [
          'known license',
          'unknown license',
          'idempotent retry',
          'retrieve',
          'create',
          'activate',
          'heartbeat',
          'token',
          'usage',
        ].map(async (name) => {
          const created = await call(a.url, adminKey, 'POST', '/api-keys', {
            name,
            role: 'product',
            productId,
          })
          assert.equal(created.status, 201)
          return { id: String(created.body.id), secret: String(created.body.secret) }
        }),
      )
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
        const retrieve = () => call(b.url, keys[3]?.secret ?? '', 'GET', `/licenses/${license.body.id}`)
        assert.equal((await retrieve()).status, 200)
        const create = () => call(b.url, keys[4]?.secret ?? '', 'POST', '/licenses', { productId })
        assert.equal((await create()).status, 201)
        const machine = { key: license.body.key, productId, fingerprint: 'machine-1' }
        const activate = () => call(b.url, keys[5]?.secret ?? '', 'POST', '/licenses/activate', machine)
        assert.equal((await activate()).status, 201)
        const heartbeat = () => call(b.url, keys[6]?.secret ?? '', 'POST', '/licenses/heartbeat', machine)
        assert.equal((await heartbeat()).status, 200)
        const token = () =>
          call(b.url, keys[7]?.secret ?? '', 'POST', `/licenses/${license.body.id}/tokens`, {})
        assert.equal((await token()).status, 201)
        const usage = () =>
          call(b.url, keys[8]?.secret ?? '', 'POST', '/licenses/usage', { key: license.body.key, productId })
        assert.equal((await usage()).status, 200)
        assert.equal((await validate(b.url, keys[2]?.secret ?? '', license.body.key, retry)).status, 200)

        for (const key of keys) {
          assert.equal((await call(a.url, adminKey, 'DELETE', `/api-keys/${key.id}`)).status, 204)
        }
        // B read each key before (validation, retrieval, creation, activation, heartbeats, tokens
        // and usage confirm their key in their own statement): each is refused at once, for a known license key and an unknown one; a kept
        // answer is not replayed; and again once B has forgotten the key.
        const refusals = [
          await validate(b.url, keys[0]?.secret ?? ''),
          await validate(b.url, keys[1]?.secret ?? '', 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE'),
          await validate(b.url, keys[2]?.secret ?? '', license.body.key, retry),
          await retrieve(),
          await create(),
          await activate(),
          await heartbeat(),
          await token(),
          await usage(),
          await validate(b.url, keys[0]?.secret ?? ''),
        ]
        assert.deepEqual(
          refusals.map((refused) => [refused.status, refused.body.code]),
          Array.from({ length: 10 }, () => [401, 'unauthenticated']),
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
