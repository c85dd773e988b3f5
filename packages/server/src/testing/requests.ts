import type { TestApp } from './build-test-app.js'
import type { AuthHeaders } from './licenses.js'

/** Injects a request under /api/v0 into a test app, with its admin key unless `headers` are given. */
export function send(
  test: TestApp,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
  headers: AuthHeaders = test.headers,
) {
  return test.app.inject({
    method,
    url: `/api/v0${url}`,
    headers,
    ...(payload === undefined ? {} : { payload }),
  })
}
