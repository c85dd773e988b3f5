import assert from 'node:assert/strict'
import { it } from 'node:test'
import { adminPoster, assertThreeOfFiftyActivate } from '../testing/seat-contention.js'
import { describeEachServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_two-processes-share-one-database-0001'

describeEachServerEnvironment(
  'activations against two server processes sharing one database',
  (environment) => {
    it('lets exactly 3 of 50 simultaneous activations through on a limit of 3, over 5 rounds', async (t) => {
      const env = { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey }
      // One after the other: the second finds the schema migrated and the admin key in place.
      const first = await startServerProcess(t, env)
      const second = await startServerProcess(t, env)
      const headers = { authorization: `Bearer ${adminKey}` }
      const post = adminPoster(adminKey)
      const product = await post(first.url, '/products', { name: 'Shared' })
      assert.equal(product.status, 201, JSON.stringify(product.body))
      const productId = product.body.id

      // 5 rounds of 50 contenders: a seat check that is not atomic across the processes lets more
      // than 3 through in nearly every round (dozens of the contenders read the same free seats at
      // once), so 5 rounds already make a miss unlikely; 20 took four times as long.
      for (let round = 0; round < 5; round++) {
        const license = await post(first.url, '/licenses', { productId, maxActivations: 3 })
        await assertThreeOfFiftyActivate(post, [first.url, second.url], license.body, productId, round)
        const seen = await fetch(`${second.url}/api/v0/licenses/${license.body.id}`, { headers })
        assert.equal(((await seen.json()) as { activationCount: number }).activationCount, 3)
      }
    })
  },
)
