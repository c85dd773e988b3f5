import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense, expectInvalidField, expectProblem, getLicense } from '../../testing/licenses.js'

// What revoking and reinstating a license refuse alike, and the product key's reach; what each
// does is in its own test file. `before` is the status the action starts from, `after` its result.
const actions = [
  { action: 'revoke', before: 'active', after: 'revoked' },
  { action: 'reinstate', before: 'revoked', after: 'active' },
] as const

describeEachDatabase('POST /api/v0/licenses/:id/revoke and /reinstate: ids and product keys', (database) => {
  for (const { action, before, after } of actions) {
    const url = (id: string) => `/api/v0/licenses/${id}/${action}`

    it(`${action}: answers 400 at #/id for a malformed id, 404 license_not_found for an unknown one`, async (t) => {
      const { app, headers } = await buildTestApp(t, database)

      const malformed = await app.inject({ method: 'POST', url: url('abc'), headers })
      const unknown = await app.inject({ method: 'POST', url: url('lic_doesNotExist000000000'), headers })

      expectInvalidField(malformed, '#/id')
      expectProblem(unknown, 404, 'license_not_found')
    })

    it(`${action}: a product key may for its own product's licenses, and is answered 404 for another's`, async (t) => {
      const { app, headers, productId } = await buildTestApp(t, database)
      const other = await createProduct(app, headers)
      const own = await createLicense(app, headers, { productId })
      const foreign = await createLicense(app, headers, { productId: other })
      if (before === 'revoked') {
        for (const id of [own.id, foreign.id]) {
          const res = await app.inject({ method: 'POST', url: `/api/v0/licenses/${id}/revoke`, headers })
          assert.equal(res.statusCode, 200, res.body)
        }
      }
      const productHeaders = await productKeyHeaders(app, headers, productId)

      const done = await app.inject({ method: 'POST', url: url(own.id), headers: productHeaders })
      const refused = await app.inject({ method: 'POST', url: url(foreign.id), headers: productHeaders })

      assert.equal(done.statusCode, 200, done.body)
      assert.equal(done.json().status, after)
      expectProblem(refused, 404, 'license_not_found')
      assert.equal((await getLicense(app, headers, foreign.id)).status, before)
    })
  }
})
