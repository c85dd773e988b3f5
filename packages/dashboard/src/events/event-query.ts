/**
 * @module The events view's filters in the URL (`?type=license.revoked&productId=…&licenseId=lic_…&from=2030-01-01&to=…
 * &apiKeyId=key_…&operatorId=opr_…`) and their translation into the API's `filter` rules.
 */
import type { KeyturnClient } from '@keyturn/client'
import { pagingQuery, readListParams } from '../components/list-params.js'

export type ListEventsQuery = NonNullable<Parameters<KeyturnClient['listEvents']>[0]>

export const eventFilterNames = [
  'type',
  'productId',
  'licenseId',
  'from',
  'to',
  'apiKeyId',
  'operatorId',
] as const
export type EventFilters = Record<(typeof eventFilterNames)[number], string>

export function readEventFilters(search: URLSearchParams): EventFilters {
  return Object.fromEntries(eventFilterNames.map((name) => [name, search.get(name) ?? ''])) as EventFilters
}

export function eventListQuery(search: URLSearchParams): ListEventsQuery {
  const filters = readEventFilters(search)
  const rules: string[] = []
  if (filters.type !== '') {
    rules.push(`type:eq:${filters.type}`)
  }
  if (filters.productId !== '') {
    rules.push(`productId:eq:${filters.productId}`)
  }
  if (filters.licenseId !== '') {
    rules.push(`licenseId:eq:${filters.licenseId}`)
  }
  if (filters.from !== '') {
    rules.push(`occurredAt:gte:${filters.from}T00:00:00.000Z`)
  }
  if (filters.to !== '') {
    rules.push(`occurredAt:lte:${filters.to}T23:59:59.999Z`)
  }
  if (filters.apiKeyId !== '') {
    rules.push(`actor.id:eq:${filters.apiKeyId}`)
  }
  if (filters.operatorId !== '') {
    rules.push('actor.type:eq:operator', `actor.id:eq:${filters.operatorId}`)
  }
  return {
    ...pagingQuery(readListParams(search)),
    ...(rules.length === 0 ? {} : { filter: rules.join(',') }),
  }
}
