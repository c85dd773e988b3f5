import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { type ApiRoute, type RouteFixture, requestFor, seedRouteFixture } from './api-routes.js'
import { type TestApp, testAdminSecret } from './build-test-app.js'
import { assertProblem } from './problems.js'

function assertUnauthenticated(res: LightMyRequestResponse): void {
  assertProblem(res, 401, 'unauthenticated')
  assert.equal(res.headers['www-authenticate'], 'Bearer')
}

/** An app and a seeded route fixture, shared by the 401 cases of a suite (nothing they do changes what a route needs). */
export interface UnauthenticatedScene {
  readonly app: TestApp['app']
  readonly headers: TestApp['headers']
  readonly fixture: RouteFixture
}

/** The scene for itRejectsUnauthenticated from a suite's shared app (suiteTestApp): seeded once. */
export function unauthenticatedScene(sharedApp: () => Promise<TestApp>): () => Promise<UnauthenticatedScene> {
  let scene: Promise<UnauthenticatedScene> | undefined
  return () => {
    scene ??= sharedApp().then(async ({ app, headers, productId }) => ({
      app,
      headers,
      fixture: await seedRouteFixture(app, headers, productId),
    }))
    return scene
  }
}

/**
 * The shared security cases of a protected route (CONTRIBUTING.md, "Tests"), as subtests of one test: each
 * request would succeed with the admin key on this scene's app and fixture (authenticate.test.ts
 * checks that), so only the credentials can explain the 401. Another product's key:
 * journeys/product-scope.test.ts.
 */
export function itRejectsUnauthenticated(
  scene: () => Promise<UnauthenticatedScene>,
  route: ApiRoute,
  prefix: string,
): void {
  it(`answers 401 unauthenticated on ${route.method} ${prefix}${route.path} without a valid key`, async (t) => {
    const { app, headers, fixture } = await scene()
    const request = requestFor(route, prefix, fixture)
    const send = (authorization?: string) =>
      app.inject({ ...request, headers: authorization === undefined ? {} : { authorization } })

    await t.test('without an Authorization header', async () => {
      assertUnauthenticated(await send())
    })

    await t.test('with a scheme other than Bearer, even around a valid secret', async () => {
      for (const authorization of [
        `Basic ${Buffer.from(`admin:${testAdminSecret}`).toString('base64')}`,
        `Token ${testAdminSecret}`,
        testAdminSecret,
        'Bearer',
        `Bearer ${testAdminSecret} extra`,
      ]) {
        assertUnauthenticated(await send(authorization))
      }
    })

    await t.test('with an unknown key', async () => {
      assertUnauthenticated(await send('Bearer kt_admin_0000000000000000000000000000000'))
    })

    await t.test('with a deleted key', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/v0/api-keys',
        headers,
        payload: { name: 'soon deleted', role: 'admin' },
      })
      assert.equal(created.statusCode, 201, created.body)
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/v0/api-keys/${created.json().id}`,
        headers,
      })
      assert.equal(deleted.statusCode, 204, deleted.body)

      assertUnauthenticated(await send(`Bearer ${created.json().secret}`))
    })

    await t.test('with an overlong key that starts with a valid one', async () => {
      assertUnauthenticated(await send(`Bearer ${testAdminSecret}${'x'.repeat(4096)}`))
    })
  })
}
