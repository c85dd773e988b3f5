/**
 * @module The CSV form of licenses, shared by export and import: one header line, one license a
 * line, null written as `null` (an empty cell means "not given").
 */
import type { LicenseResource } from '@keyturn/client'

/** The columns `licenses export --format csv` writes, in order. */
export const exportColumns = [
  'id',
  'key',
  'productId',
  'status',
  'maxActivations',
  'expirationDate',
  'activationCount',
  'createdAt',
  'updatedAt',
] as const satisfies readonly (keyof LicenseResource)[]

/** A cell as RFC 4180 writes it: quoted when it holds a comma, a quote, a line break or edge spaces. */
function cell(value: unknown): string {
  const text = value === null ? 'null' : String(value)
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function csvHeader(): string {
  return `${exportColumns.join(',')}\r\n`
}

export function csvLine(license: LicenseResource): string {
  return `${exportColumns.map((column) => cell(license[column])).join(',')}\r\n`
}
