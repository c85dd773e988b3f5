import assert from 'node:assert/strict'
import { it } from 'node:test'
import { describeEachServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_two-processes-share-one-database-0001'

describeEachServerEnvironment(
  'activations against two server processes sharing one database',
  (environment) => {
    it('lets exactly 3 of 50 simultaneous activations through on a limit of 3, over 20 rounds', async (t) => {
      const env = { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey }
      // One after the other: the second finds the schema migrated and the admin key in place.
      const first = await startServerProcess(t, env)
      const second = await startServerProcess(t, env)
      const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
      const post = async (base: string, path: string, body: unknown) => {
        const res = await fetch(`${base}/api/v0${path}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        })
        return { status: res.status, body: (await res.json()) as { id: string; key: string } } // the API's JSON
      }
      const product = await post(first.url, '/products', { name: 'Shared' })
      assert.equal(product.status, 201, JSON.stringify(product.body))
      const productId = product.body.id

      for (let round = 0; round < 20; round++) {
        const license = await post(first.url, '/licenses', { productId, maxActivations: 3 })
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, machine) =>
            post(machine % 2 === 0 ? first.url : second.url, '/licenses/activate', {
              key: license.body.key,
              productId,
              fingerprint: `round-${round}-machine-${machine}`,
            }),
          ),
        )
        const statuses = answers.map((answer) => answer.status)
        assert.equal(
          statuses.filter((status) => status === 201).length,
          3,
          `round ${round}: ${statuses.join(',')}`,
        )
        assert.equal(
          statuses.filter((status) => status === 409).length,
          47,
          `round ${round}: ${statuses.join(',')}`,
        )
        const seen = await fetch(`${second.url}/api/v0/licenses/${license.body.id}`, { headers })
        assert.equal(((await seen.json()) as { activationCount: number }).activationCount, 3)
      }
    })
  },
)
