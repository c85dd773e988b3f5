import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  apiRoutes,
  catalogueAppOptions,
  operatorRoutes,
  requestFor,
  seedRouteFixture,
} from '../../testing/api-routes.js'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase, sqliteTestDatabase } from '../../testing/each-database.js'
import { type SignedInOperator, signedInOperator } from '../../testing/operators.js'
import type { OperatorRole } from '../operator.js'
import type { RequiredOperatorRole } from '../operator-permissions.js'

/** From the least role to the most: a route allowed to one role is allowed to every later one. */
const ascending: readonly OperatorRole[] = ['viewer', 'support', 'admin', 'owner']

function allows(required: RequiredOperatorRole, role: OperatorRole): boolean {
  return required !== 'none' && ascending.indexOf(role) >= ascending.indexOf(required)
}

function assertForbidden(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  what: string,
) {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`)
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', what)
  assert.equal(JSON.parse(res.body).code, 'forbidden', what)
}

describe('Operator roles on every API route (the catalogue × roles)', () => {
  it('refuses each role what the catalogue says it may not do (403), and lets the least allowed role do it (2xx)', async (t) => {
    const test = await buildTestApp(t, sqliteTestDatabase(), catalogueAppOptions)
    const fixture = await seedRouteFixture(test.app, test.headers, test.productId, test.services.deliveries)
    const signedIn = new Map<OperatorRole, SignedInOperator>()
    for (const role of ascending) {
      signedIn.set(role, await signedInOperator(test, role))
    }

    for (const route of apiRoutes) {
      let succeeded = false
      for (const role of ascending) {
        const operator = signedIn.get(role) as SignedInOperator
        const request = requestFor(route, '/api/v0', fixture)
        const res = await test.app.inject({ ...request, headers: operator.write })
        const what = `${role} ${route.method} ${route.path}`
        if (!allows(route.operatorRole, role)) {
          assertForbidden(res, what)
        } else if (!succeeded) {
          assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${what}: ${res.body}`)
          succeeded = true
        } else {
          // Done once already (a second revoke, delete…): any answer but a refusal of the role.
          assert.ok(![401, 403].includes(res.statusCode), `${what}: ${res.body}`)
        }
      }
    }

    const target = await signedInOperator(test, 'viewer')
    for (const route of operatorRoutes) {
      const url = `/api/v0${route.url(target)}`
      const payload = route.payload?.()
      for (const role of ascending) {
        const operator = signedIn.get(role) as SignedInOperator
        const res = await test.app.inject({
          method: route.method,
          url,
          headers: operator.write,
          ...(payload === undefined ? {} : { payload }),
        })
        const what = `${role} ${route.method} ${route.path}`
        if (allows(route.operatorRole, role)) {
          assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${what}: ${res.body}`)
        } else {
          assertForbidden(res, what)
        }
      }
      const byKey = await test.app.inject({
        method: route.method,
        url,
        headers: test.headers,
        ...(payload === undefined ? {} : { payload }),
      })
      assertForbidden(byKey, `an admin API key ${route.method} ${route.path}`)
    }
  })
})

describeEachDatabase('Operator roles', (database) => {
  it('a support operator revokes a license but may not delete a customer; the last owner stays an owner', async (t) => {
    const test = await buildTestApp(t, database)
    const support = await signedInOperator(test, 'support')
    const owner = await signedInOperator(test, 'owner')
    const license = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: test.headers,
      payload: { productId: test.productId },
    })
    const customer = await test.app.inject({
      method: 'POST',
      url: '/api/v0/customers',
      headers: test.headers,
      payload: { email: 'spare@example.com' },
    })

    const revoked = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.json().id}/revoke`,
      headers: support.write,
    })
    assert.equal(revoked.statusCode, 200, revoked.body)
    const deleted = await test.app.inject({
      method: 'DELETE',
      url: `/api/v0/customers/${customer.json().id}`,
      headers: support.write,
    })
    assertForbidden(deleted, 'support deletes a customer')
    assert.match(JSON.parse(deleted.body).detail, /support role may not do this\. Operators: admin or above/)

    const demoted = await test.app.inject({
      method: 'PATCH',
      url: `/api/v0/operators/${owner.id}`,
      headers: owner.write,
      payload: { role: 'admin' },
    })
    assertForbidden(demoted, 'the last owner demotes itself')
    assert.match(JSON.parse(demoted.body).detail, /last active owner/)
    const disabled = await test.app.inject({
      method: 'PATCH',
      url: `/api/v0/operators/${owner.id}`,
      headers: owner.write,
      payload: { status: 'disabled' },
    })
    assertForbidden(disabled, 'the last owner disables itself')

    const invited = await test.app.inject({
      method: 'POST',
      url: '/api/v0/operators',
      headers: owner.write,
      payload: { email: 'new@example.com', name: 'New', role: 'owner' },
    })
    assert.equal(invited.statusCode, 201, invited.body)
    assert.match(
      invited.json().invitationUrl,
      /^http:\/\/localhost(:\d+)?\/dashboard\/invitation#[\w-]{20,}$/,
    )
    const list = await test.app.inject({ method: 'GET', url: '/api/v0/operators', headers: support.read })
    assert.deepEqual(
      list
        .json()
        .data.map((o: { email: string; status: string }) => `${o.email} ${o.status}`)
        .sort(),
      ['new@example.com invited', `${owner.email} active`, `${support.email} active`].sort(),
    )
    assert.doesNotMatch(list.body, /password|invitation#/i)
  })
})
