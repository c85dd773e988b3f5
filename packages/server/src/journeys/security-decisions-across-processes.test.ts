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
): Promise<Answer> {
  const res = await fetch(`${base}/api/v0${path}`, {
    method,
    headers: {
      authorization: `Bearer ${secret}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) }
}

// Issue 14's rule: once the request that changed a security decision has returned, no process sharing
// the database answers as if it had not happened. Guards any cache on the authentication or validation path.
describeEachServerEnvironment(
  'Security decisions across two server processes on one database',
  (environment) => {
    it('refuses a deleted key and reports a revoked or suspended license on the other process at once when both are busy', async (t) => {
      const env = { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey }
      const [a, b] = await Promise.all([startServerProcess(t, env), startServerProcess(t, env)])
      const product = await call(a.url, adminKey, 'POST', '/products', { name: 'Shared' })
      const productId = String(product.body.id)
      const created = await call(a.url, adminKey, 'POST', '/api-keys', {
        name: 'app',
        role: 'product',
        productId,
      })
      assert.equal(created.status, 201)
      const productKey = String(created.body.secret)
      const license = await call(a.url, adminKey, 'POST', '/licenses', { productId })
      const validate = (base: string, secret: string) =>
        call(base, secret, 'POST', '/licenses/validate', { key: license.body.key, productId })

      // Both processes keep answering for the key while the changes happen (warms any cache).
      let hammering = true
      const hammer = (async () => {
        while (hammering) {
          await Promise.all([
            validate(a.url, adminKey),
            validate(b.url, adminKey),
            validate(b.url, productKey),
          ])
        }
      })()
      try {
        assert.equal((await validate(b.url, productKey)).status, 200)

        assert.equal((await call(a.url, adminKey, 'DELETE', `/api-keys/${created.body.id}`)).status, 204)
        // B read the key before (its validations confirm the key in their own statement): refused
        // at once, for a known license key and an unknown one alike, then again once B forgot it.
        for (const body of [
          { key: license.body.key, productId },
          { key: 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE', productId },
          { key: license.body.key, productId },
        ]) {
          const refused = await call(b.url, productKey, 'POST', '/licenses/validate', body)
          assert.deepEqual([refused.status, refused.body.code], [401, 'unauthenticated'])
        }

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
