/**
 * @module The licenses view's filters as URL parameters (`?status=active&productId=prd_…&expiresFrom=
 * 2030-01-01&expiresTo=2030-12-31`) and their translation into the API's `filter` rules.
 */
import type { KeyturnClient } from '@keyturn/client'
import { pagingQuery, readListParams } from '../components/list-params.js'

export type ListLicensesQuery = NonNullable<Parameters<KeyturnClient['listLicenses']>[0]>

export const licenseStatuses = ['active', 'expired', 'revoked'] as const
export const defaultLicenseSort = 'createdAt:desc'

export interface LicenseFilters {
  readonly status: string
  readonly productId: string
  /** Dates (YYYY-MM-DD, UTC) bounding the expiration date, both inclusive. */
  readonly expiresFrom: string
  readonly expiresTo: string
  readonly customerId: string
  readonly policyId: string
  /** A metadata key and the value it must equal. */
  readonly metaKey: string
  readonly metaValue: string
}

export const filterNames = [
  'status',
  'productId',
  'expiresFrom',
  'expiresTo',
  'customerId',
  'policyId',
  'metaKey',
  'metaValue',
] as const

export function readLicenseFilters(search: URLSearchParams): LicenseFilters {
  return {
    status: search.get('status') ?? '',
    productId: search.get('productId') ?? '',
    expiresFrom: search.get('expiresFrom') ?? '',
    expiresTo: search.get('expiresTo') ?? '',
    customerId: search.get('customerId') ?? '',
    policyId: search.get('policyId') ?? '',
    metaKey: search.get('metaKey') ?? '',
    metaValue: search.get('metaValue') ?? '',
  }
}

/** The API query for the view the URL describes; bad values are left for the API to refuse, visibly. */
export function licenseListQuery(search: URLSearchParams, productScope?: string): ListLicensesQuery {
  const filters = readLicenseFilters(search)
  const rules: string[] = []
  if (filters.status !== '') {
    rules.push(`status:eq:${filters.status}`)
  }
  const productId = productScope ?? filters.productId
  if (productId !== '') {
    rules.push(`productId:eq:${productId}`)
  }
  if (filters.expiresFrom !== '') {
    rules.push(`expirationDate:gte:${filters.expiresFrom}T00:00:00.000Z`)
  }
  if (filters.expiresTo !== '') {
    rules.push(`expirationDate:lte:${filters.expiresTo}T23:59:59.999Z`)
  }
  if (filters.customerId !== '') {
    rules.push(`customerId:eq:${filters.customerId}`)
  }
  if (filters.policyId !== '') {
    rules.push(`policyId:eq:${filters.policyId}`)
  }
  if (filters.metaKey !== '') {
    rules.push(`metadata.${filters.metaKey}:eq:${filters.metaValue}`)
  }
  return {
    ...pagingQuery(readListParams(search)),
    ...(rules.length === 0 ? {} : { filter: rules.join(',') }),
  }
}
