/**
 * @module The CSV form of licenses, shared by export and import: one header line, one license a
 * line, null written as `null` (an empty cell means "not given"). `entitlements` are codes separated
 * by spaces; `metadata` is a JSON object.
 */
import type { LicenseResource } from '@keyturn/client'
import { type Options, stringify } from 'csv-stringify/sync'

/** A license as exported: the API's, plus its customer's email (import finds or creates it). */
export type ExportedLicense = LicenseResource & { readonly customerEmail: string | null }

/**
 * The columns `licenses export --format csv` writes, in order: every field `licenses import` reads
 * back (a test holds the two together), and the ones it ignores (id, key, status's details, counts).
 */
export const exportColumns = [
  'id',
  'key',
  'productId',
  'status',
  'maxActivations',
  'expirationDate',
  'heartbeatTtl',
  'maxUses',
  'uses',
  'activationCount',
  'createdAt',
  'updatedAt',
  'customerId',
  'customerEmail',
  'policyId',
  'entitlements',
  'metadata',
  'externalId',
] as const satisfies readonly (keyof ExportedLicense)[]

/** A value as its cell's text: null as `null`, a list space-separated, an object as JSON. */
function cellText(value: unknown): string {
  return value === null
    ? 'null'
    : Array.isArray(value)
      ? value.join(' ')
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)
}

/**
 * RFC 4180 with CRLF line ends: a cell is quoted when it holds a comma or a quote (csv-stringify's
 * own rule), a line break, or spaces at either end (which a reader might trim).
 */
const csvOptions: Options = { record_delimiter: 'windows', quoted_match: [/[\r\n]/, /^\s|\s$/] }

export function csvHeader(): string {
  return stringify([[...exportColumns]], csvOptions)
}

export function csvLine(license: ExportedLicense): string {
  return stringify([exportColumns.map((column) => cellText(license[column]))], csvOptions)
}
