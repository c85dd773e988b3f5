/**
 * @module The CSV form of licenses, shared by export and import: one header line, one license a
 * line, null written as `null` (an empty cell means "not given"). `entitlements` are codes separated
 * by spaces; `metadata` is a JSON object.
 */
import type { LicenseResource } from '@keyturn/client'

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
] as const satisfies readonly (keyof ExportedLicense)[]

/** A cell as RFC 4180 writes it: quoted when it holds a comma, a quote, a line break or edge spaces. */
function cell(value: unknown): string {
  const text =
    value === null
      ? 'null'
      : Array.isArray(value)
        ? value.join(' ')
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value)
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function csvHeader(): string {
  return `${exportColumns.join(',')}\r\n`
}

export function csvLine(license: ExportedLicense): string {
  return `${exportColumns.map((column) => cell(license[column])).join(',')}\r\n`
}
