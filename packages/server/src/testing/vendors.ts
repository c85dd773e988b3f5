import assert from 'node:assert/strict'
import type { App } from '../http/app-types.js'
import type { AuthHeaders } from './licenses.js'

/** Sends a request under /api/v0 and asserts the status; returns the parsed body (undefined for 204). */
export async function call(
  app: App,
  headers: AuthHeaders,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  expected: number,
  payload?: Record<string, unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are checked field by field by the caller
): Promise<any> {
  const res = await app.inject({
    method,
    url: `/api/v0${url}`,
    headers,
    ...(payload === undefined ? {} : { payload }),
  })
  assert.equal(res.statusCode, expected, `${method} ${url}: ${res.body}`)
  return res.body === '' ? undefined : res.json()
}

/** An API key of `role` for a product, as an Authorization header. */
export async function roleHeaders(
  app: App,
  admin: AuthHeaders,
  role: 'product' | 'client',
  productId: string,
): Promise<AuthHeaders> {
  const key = await call(app, admin, 'POST', '/api-keys', 201, { name: `${role} key`, role, productId })
  return { authorization: `Bearer ${key.secret}` }
}
