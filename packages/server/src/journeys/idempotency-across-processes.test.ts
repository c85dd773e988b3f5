import assert from 'node:assert/strict'
import { it } from 'node:test'
import { describeEachServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_two-processes-share-idempotency-keys-01'

describeEachServerEnvironment(
  'Idempotency-Key against two server processes sharing one database',
  (environment) => {
    it('creates one license for 20 simultaneous retries of one request, over 5 rounds', async (t) => {
      const env = { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey }
      const first = await startServerProcess(t, env)
      const second = await startServerProcess(t, env)
      const post = async (base: string, path: string, body: unknown, key?: string) => {
        const res = await fetch(`${base}/api/v0${path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${adminKey}`,
            'content-type': 'application/json',
            ...(key === undefined ? {} : { 'idempotency-key': key }),
          },
          body: JSON.stringify(body),
        })
        const text = await res.text()
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text }
      }
      const product = await post(first.url, '/products', { name: 'Shared' })
      const productId = (JSON.parse(product.text) as { id: string }).id // the API's JSON

      // A key that is not claimed atomically across the processes lets several of 20 simultaneous
      // retries through in nearly every round: 5 rounds already make a miss unlikely.
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, n) =>
            post(n % 2 === 0 ? first.url : second.url, '/licenses', { productId }, `round-${round}`),
          ),
        )
        const summary = answers.map((a) => `${a.status}${a.replayed ? 'r' : ''}`).join(',')
        const original = answers.filter((a) => a.status === 201 && a.replayed === null)
        assert.equal(original.length, 1, `round ${round}: ${summary}`)
        for (const answer of answers) {
          if (answer.status === 201) {
            assert.equal(answer.text, original[0]?.text, `round ${round}: a replay is the first response`)
          } else {
            assert.equal(answer.status, 409, `round ${round}: ${summary}`)
            assert.match(answer.text, /idempotency_key_in_progress/)
          }
        }
      }
      const list = await fetch(`${second.url}/api/v0/licenses?limit=1`, {
        headers: { authorization: `Bearer ${adminKey}` },
      })
      assert.equal(((await list.json()) as { totalCount: number }).totalCount, 5)
    })
  },
)
