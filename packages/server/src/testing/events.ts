import assert from 'node:assert/strict'
import type { App } from '../http/app-types.js'
import type { AuthHeaders } from './licenses.js'

/** An event as `GET /api/v0/events` lists it, with its resource's fields under `data`. */
export interface ListedEvent {
  readonly type: string
  readonly data: Readonly<Record<string, unknown>>
}

/** The events `GET /api/v0/events?<query>` lists (its first page). */
export async function listEvents(app: App, headers: AuthHeaders, query: string): Promise<ListedEvent[]> {
  const res = await app.inject({ method: 'GET', url: `/api/v0/events?${query}`, headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}
