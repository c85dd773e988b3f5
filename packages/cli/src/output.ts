import type { Io } from './io.js'

type Cell = string | number | boolean | null | undefined

/** How a value reads in a table: null as the given word (`never`, `unlimited`), else as text. */
export function show(value: Cell, ifNull = '-'): string {
  return value === null || value === undefined || value === '' ? ifNull : String(value)
}

/** Prints rows as columns aligned under upper-case headers. */
export function printTable(io: Io, headers: readonly string[], rows: readonly (readonly Cell[])[]): void {
  const text = [
    headers.map((header) => header.toUpperCase()),
    ...rows.map((row) => row.map((cell) => show(cell))),
  ]
  const widths = headers.map((_, column) => Math.max(...text.map((row) => (row[column] ?? '').length)))
  for (const row of text) {
    io.print(
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
  }
}

/** Prints one resource as `field  value` lines, the names aligned. */
export function printFields(io: Io, fields: readonly (readonly [string, Cell])[]): void {
  const width = Math.max(...fields.map(([name]) => name.length))
  for (const [name, value] of fields) {
    io.print(`${name.padEnd(width)}  ${show(value)}`)
  }
}

/** The API's JSON, as a script reads it: one document, two-space indented. */
export function printJson(io: Io, value: unknown): void {
  io.print(JSON.stringify(value, null, 2))
}
