import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { it } from 'node:test'
import { createProduct, productKeyHeaders } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startTestServer } from '../testing/listening-app.js'

/** POSTs JSON over one keep-alive connection of `agent`; answers the status and body. */
function post(agent: Agent, url: string, authorization: string, body: unknown) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { authorization, 'content-type': 'application/json' } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
      },
    )
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

// Validation recalls, per connection, the secret it last sent (api-key-service.ts `authenticate`):
// what a connection sends next is still judged as itself.
describeEachDatabase('API keys recalled per connection', (database) => {
  it('judges each secret a connection sends as its own key, and refuses a key deleted meanwhile', async (t) => {
    const { app, baseUrl, connection, headers, productId } = await startTestServer(t, database)
    const otherProductId = await createProduct(app, headers)
    const ownKey = (await productKeyHeaders(app, headers, productId)).authorization
    const otherKey = (await productKeyHeaders(app, headers, otherProductId)).authorization
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId },
    })
    const license = { key: created.json().key, productId }
    let connections = 0
    app.server.on('connection', () => {
      connections += 1
    })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const validate = (authorization: string) =>
      post(agent, `${baseUrl}/api/v0/licenses/validate`, authorization, license)

    assert.equal((await validate(ownKey)).status, 200)
    // The same connection, another product's key: that key's product, not the one recalled.
    const other = await validate(otherKey)
    assert.equal(other.status, 404)
    assert.equal(other.body.code, 'license_not_found')
    assert.equal((await validate(`${ownKey}x`)).status, 401)
    assert.equal((await validate(ownKey)).status, 200)

    const ownKeyId = (
      await app.inject({ method: 'GET', url: '/api/v0/api-keys/current', headers: { authorization: ownKey } })
    ).json().id
    // Deleted straight in the database, as another process would: this process is not told.
    await connection.db.deleteFrom('api_keys').where('id', '=', ownKeyId).execute()
    const gone = await validate(ownKey)
    assert.equal(gone.status, 401)
    assert.equal((await validate(ownKey)).status, 401)
    assert.equal(connections, 1, 'every request went over one connection')
  })
})
