import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem } from '../../testing/licenses.js'
import { call, roleHeaders } from '../../testing/vendors.js'
import { prefixRange } from '../prefix-range.js'

describeEachDatabase('/api/v0/search', (database) => {
  it('finds licenses, customers and machines by each kind of query, scoped to a product key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const otherProduct = await createProduct(app, headers, 'Other')
    const ada = await call(app, headers, 'POST', '/customers', 201, {
      email: 'Ada@Example.com',
      name: 'Ada Lovelace',
    })
    const adam = await call(app, headers, 'POST', '/customers', 201, {
      email: 'adam@example.com',
      name: 'Adam Smith',
    })
    const grace = await call(app, headers, 'POST', '/customers', 201, {
      email: 'grace@example.com',
      name: 'Grace',
    })
    const mine = await call(app, headers, 'POST', '/licenses', 201, { productId, customerId: ada.id })
    const theirs = await call(app, headers, 'POST', '/licenses', 201, {
      productId: otherProduct,
      customerId: adam.id,
      key: 'VENDOR-key-42',
    })
    const machine = await call(app, headers, 'POST', '/licenses/activate', 201, {
      key: mine.key,
      productId,
      fingerprint: 'fp-shared',
      name: 'Ada’s Laptop',
    })
    const otherMachine = await call(app, headers, 'POST', '/licenses/activate', 201, {
      key: theirs.key,
      productId: otherProduct,
      fingerprint: 'fp-shared',
      name: 'Build server',
    })
    const search = async (q: string, as = headers) =>
      (await call(app, as, 'GET', `/search?q=${encodeURIComponent(q)}`, 200)).data as {
        object: string
        id: string
        matched: string
        title: string
        subtitle: string
        licenseId?: string
      }[]
    const ids = async (q: string, as = headers) =>
      (await search(q, as)).map((hit) => `${hit.object}:${hit.id}:${hit.matched}`)

    // A Keyturn key in any case, without dashes, with look-alikes; a vendor's key exactly as given.
    const sloppyKey = mine.key.replaceAll('-', '').toLowerCase().replaceAll('0', 'o').replaceAll('1', 'l')
    assert.deepEqual(await ids(sloppyKey), [`License:${mine.id}:key`])
    const [keyHit] = await search(mine.key)
    assert.deepEqual(keyHit, {
      object: 'License',
      id: mine.id,
      title: mine.key,
      subtitle: 'Test Product · Ada@Example.com',
      matched: 'key',
      productId,
      licenseId: mine.id,
    })
    assert.deepEqual(await ids('VENDOR-key-42'), [`License:${theirs.id}:key`])
    assert.deepEqual(await ids('vendor-key-42'), [], 'a vendor key matches exactly')
    assert.deepEqual(await ids(mine.key.slice(0, 11)), [], 'never a prefix of a key')

    // Emails exactly in any case; names by prefix in any case; ids.
    assert.deepEqual(await ids('ADA@example.COM'), [`Customer:${ada.id}:email`])
    assert.deepEqual(await ids('ada@example'), [])
    const idLike = await call(app, headers, 'POST', '/customers', 201, { email: 'cus_1@example.com' })
    assert.deepEqual(await ids('CUS_1@example.com'), [`Customer:${idLike.id}:email`])
    assert.deepEqual(await ids('ada'), [
      `Customer:${ada.id}:name`,
      `Customer:${adam.id}:name`,
      `Activation:${machine.id}:name`,
    ])
    assert.deepEqual(await ids('ADA L'), [`Customer:${ada.id}:name`])
    const emile = await call(app, headers, 'POST', '/customers', 201, {
      email: 'e@example.com',
      name: 'Émile Zola',
    })
    assert.deepEqual(await ids('Émile'), [`Customer:${emile.id}:name`])
    assert.deepEqual(await ids('build'), [`Activation:${otherMachine.id}:name`])
    assert.deepEqual(await ids(mine.id), [`License:${mine.id}:id`])
    assert.deepEqual(await ids(grace.id), [`Customer:${grace.id}:id`])
    assert.deepEqual(await ids(machine.id), [`Activation:${machine.id}:id`])
    assert.deepEqual(
      (await ids('fp-shared')).sort(),
      [`Activation:${machine.id}:fingerprint`, `Activation:${otherMachine.id}:fingerprint`].sort(),
    )
    const [fingerprintHit] = await search(machine.id)
    assert.equal(fingerprintHit?.subtitle, `fp-shared · License ${mine.key}`)
    assert.equal(fingerprintHit?.licenseId, mine.id)

    // A product key sees its own product's licenses and machines, and customers owning one of them.
    const product = await roleHeaders(app, headers, 'product', productId)
    assert.deepEqual(await ids('VENDOR-key-42', product), [])
    assert.deepEqual(await ids(theirs.id, product), [])
    assert.deepEqual(await ids(adam.id, product), [])
    assert.deepEqual(await ids(grace.id, product), [])
    assert.deepEqual(await ids('adam@example.com', product), [])
    assert.deepEqual(await ids('ada', product), [`Customer:${ada.id}:name`, `Activation:${machine.id}:name`])
    assert.deepEqual(await ids('fp-shared', product), [`Activation:${machine.id}:fingerprint`])
    assert.deepEqual(await ids(otherMachine.id, product), [])
    assert.deepEqual(await ids(mine.key, product), [`License:${mine.id}:key`])

    // Client keys are embedded in applications: they may not search.
    const client = await roleHeaders(app, headers, 'client', productId)
    expectProblem(
      await app.inject({ method: 'GET', url: '/api/v0/search?q=ada', headers: client }),
      403,
      'forbidden',
    )
  })

  it('answers 400 for a missing, empty or over-long query, and an empty list for anything unmatched', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const get = (query: string) => app.inject({ method: 'GET', url: `/api/v0/search${query}`, headers })
    expectInvalidField(await get(''), '#/q')
    expectInvalidField(await get('?q='), '#/q')
    expectInvalidField(await get(`?q=${'a'.repeat(257)}`), '#/q')
    for (const hostile of [
      "' or 1=1 --",
      '%',
      '_',
      'a%',
      '\\',
      '   ',
      '😀',
      '\u{10ffff}',
      'lic_',
      'x'.repeat(256),
    ]) {
      const res = await get(`?q=${encodeURIComponent(hostile)}`)
      assert.equal(res.statusCode, 200, `${hostile}: ${res.body}`)
      assert.deepEqual(res.json(), { object: 'List', data: [] }, hostile)
    }
  })

  it('caps an answer at 20 hits', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    for (let i = 0; i < 22; i++) {
      await call(app, headers, 'POST', '/customers', 201, { email: `c${i}@example.com`, name: `Zed ${i}` })
    }
    assert.equal((await call(app, headers, 'GET', '/search?q=zed', 200)).data.length, 20)
  })
})

it('turns a prefix into the range of texts that start with it, in code-point order', () => {
  assert.deepEqual(prefixRange('ab'), { from: 'ab', to: 'ac' })
  assert.deepEqual(prefixRange('a\ud7ff'), { from: 'a\ud7ff', to: 'a\ue000' })
  assert.deepEqual(prefixRange('😀'), { from: '😀', to: '😁' })
})
