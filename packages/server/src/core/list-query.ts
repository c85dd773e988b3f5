/**
 * Lists: the parsed form of `page`, `limit`, `sort`, `filter` and `starting_after`
 * (docs/decisions/0003-lists.md), checked against each resource's allow-list, and the pagination
 * arithmetic.
 * Stores translate the parsed form into parameterised SQL (storage/list-sql.ts).
 */
import { defaultPageLimit, type Paginated, type SortOrder } from '@keyturn/protocol'
import { DomainError, InvalidInputError } from './errors.js'

/** How a field's filter values are read and which operators apply. */
export type FieldKind =
  | { readonly type: 'timestamp'; readonly nullable?: boolean }
  | { readonly type: 'integer'; readonly nullable?: boolean }
  | { readonly type: 'string' }
  | { readonly type: 'enum'; readonly values: readonly string[] }
  /** Written `metadata.<key>`: the rule carries the key; only `eq`. */
  | { readonly type: 'metadata' }

export type FieldKinds<F extends string> = { readonly [K in F]: FieldKind }

export const filterOperators = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'null', 'notnull'] as const
export type FilterOperator = (typeof filterOperators)[number]
export type FilterValue = string | number

export type FilterRule<F extends string> =
  | { readonly field: F; readonly operator: 'null' | 'notnull' }
  | {
      readonly field: F
      readonly operator: Exclude<FilterOperator, 'null' | 'notnull' | 'in'>
      readonly value: FilterValue
      /** The metadata key of a `metadata.<key>` rule. */
      readonly key?: string
    }
  | { readonly field: F; readonly operator: 'in'; readonly values: readonly FilterValue[] }

export interface Sort<S extends string> {
  readonly field: S
  readonly order: SortOrder
}

/** A list request after parsing: what a store needs to answer it. */
export interface ListRequest<S extends string, F extends string> {
  readonly limit: number
  /** Page mode: the page number; keyset mode: undefined. */
  readonly page: number | undefined
  readonly startingAfter: string | undefined
  readonly sort: Sort<S>
  readonly filters: readonly FilterRule<F>[]
}

/** What a store returns for a list request. */
export interface ListSlice<T> {
  readonly items: T[]
  readonly totalCount: number
  /** Position of the first item in the whole ordered list (0-based). */
  readonly offset: number
}

export interface RawListQuery {
  readonly page?: number | undefined
  readonly limit?: number | undefined
  readonly sort?: string | undefined
  readonly filter?: string | undefined
  readonly starting_after?: string | undefined
}

export interface ListSpec<S extends string, F extends string> {
  readonly sortFields: readonly S[]
  readonly defaultSort: Sort<S>
  readonly filterFields: FieldKinds<F>
}

const maxFilterRules = 20
const maxInValues = 50

export function parseListQuery<S extends string, F extends string>(
  query: RawListQuery,
  spec: ListSpec<S, F>,
): ListRequest<S, F> {
  if (query.page !== undefined && query.starting_after !== undefined) {
    throw new InvalidInputError('#/starting_after', '`starting_after` cannot be combined with `page`.')
  }
  return {
    limit: query.limit ?? defaultPageLimit,
    page: query.starting_after === undefined ? (query.page ?? 0) : undefined,
    startingAfter: query.starting_after,
    sort: query.sort === undefined ? spec.defaultSort : parseSort(query.sort, spec.sortFields),
    filters: query.filter === undefined ? [] : parseFilter(query.filter, spec.filterFields),
  }
}

export function parseSort<S extends string>(text: string, fields: readonly S[]): Sort<S> {
  const [field, order = 'asc', ...rest] = text.split(':')
  const isField = (candidate: string | undefined): candidate is S =>
    fields.some((known) => known === candidate)
  if (!isField(field) || (order !== 'asc' && order !== 'desc') || rest.length > 0) {
    throw new InvalidInputError(
      '#/sort',
      `\`sort\` must be field:order with field one of ${fields.join(', ')} and order asc or desc; got "${text}".`,
    )
  }
  return { field, order }
}

/** Parses `field:operator:value,…`; the value may itself contain `:` (timestamps do). */
export function parseFilter<F extends string>(text: string, fields: FieldKinds<F>): FilterRule<F>[] {
  const rules = text.split(',')
  if (rules.length > maxFilterRules) {
    throw new DomainError('invalid_filter', `A filter may have at most ${maxFilterRules} rules.`)
  }
  return rules.map((rule) => parseRule(rule, fields))
}

function parseRule<F extends string>(rule: string, fields: FieldKinds<F>): FilterRule<F> {
  const fail = (why: string): never => {
    throw new DomainError('invalid_filter', `Filter rule "${rule}": ${why}`)
  }
  const first = rule.indexOf(':')
  const second = first < 0 ? -1 : rule.indexOf(':', first + 1)
  const field = first < 0 ? rule : rule.slice(0, first)
  const operator = first < 0 ? '' : second < 0 ? rule.slice(first + 1) : rule.slice(first + 1, second)
  const raw = second < 0 ? undefined : rule.slice(second + 1)

  const isField = (candidate: string): candidate is F => Object.hasOwn(fields, candidate)
  const metadataField = 'metadata'
  if (field.startsWith('metadata.') && isField(metadataField)) {
    return parseMetadataRule(metadataField, field.slice('metadata.'.length), operator, raw, fail)
  }
  if (!isField(field) || fields[field].type === 'metadata') {
    return fail(`unknown field "${field}"; use one of ${Object.keys(fields).join(', ')}.`)
  }
  const kind = fields[field]
  const isOperator = (candidate: string): candidate is FilterOperator =>
    filterOperators.some((known) => known === candidate)
  if (!isOperator(operator)) {
    return fail(`unknown operator "${operator}"; use one of ${filterOperators.join(', ')}.`)
  }
  if (!allowedOperators(kind).includes(operator)) {
    return fail(
      `operator "${operator}" does not apply to ${field}; use one of ${allowedOperators(kind).join(', ')}.`,
    )
  }
  if (operator === 'null' || operator === 'notnull') {
    return raw === undefined ? { field, operator } : fail(`operator "${operator}" takes no value.`)
  }
  if (raw === undefined || raw === '') {
    return fail(`operator "${operator}" needs a value.`)
  }
  if (operator === 'in') {
    const parts = raw.split('|')
    if (parts.length > maxInValues) {
      return fail(`"in" takes at most ${maxInValues} values.`)
    }
    return { field, operator, values: parts.map((part) => parseValue(part, kind, fail)) }
  }
  return { field, operator, value: parseValue(raw, kind, fail) }
}

const metadataKey = /^[A-Za-z0-9_.-]{1,40}$/

function parseMetadataRule<F extends string>(
  field: F,
  key: string,
  operator: string,
  raw: string | undefined,
  fail: (why: string) => never,
): FilterRule<F> {
  if (!metadataKey.test(key)) {
    return fail(`"${key}" is not a metadata key (1 to 40 characters of A-Z, a-z, 0-9, _ . -).`)
  }
  if (operator !== 'eq') {
    return fail(`metadata.${key} takes only the operator "eq".`)
  }
  if (raw === undefined) {
    return fail('operator "eq" needs a value.')
  }
  if (raw.includes('\u0000') || raw.length > 500) {
    return fail('the value must be at most 500 characters, without NUL.')
  }
  return { field, operator, value: raw, key }
}

function allowedOperators(kind: FieldKind): readonly FilterOperator[] {
  const nullable = 'nullable' in kind && kind.nullable === true ? (['null', 'notnull'] as const) : []
  switch (kind.type) {
    case 'enum':
      return ['eq', 'ne', 'in']
    case 'string':
      return ['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte']
    default:
      return ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', ...nullable]
  }
}

const isoTimestamp = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/
/** What an offset may not carry out of: PostgreSQL has no year 0, and SQLite compares text. */
const storableYear = /^(?!0000)\d{4}-/
/** Integer columns are 32-bit (PostgreSQL refuses a larger comparand rather than comparing). */
const int32 = { min: -2_147_483_648, max: 2_147_483_647 }

/** Whether the date part names a real day: Date.parse rolls 2030-02-30 over to March 2. */
function isCalendarDate(raw: string): boolean {
  const [year, month, day] = raw.slice(0, 10).split('-').map(Number)
  if (year === undefined || month === undefined || day === undefined) {
    return false
  }
  // 2000 + year % 400 has the same leap years as year (and Date.UTC reads years below 100 as 19xx).
  return day <= new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate()
}

function parseValue(raw: string, kind: FieldKind, fail: (why: string) => never): FilterValue {
  switch (kind.type) {
    case 'timestamp': {
      const time = isoTimestamp.test(raw) && isCalendarDate(raw) ? Date.parse(raw) : Number.NaN
      if (Number.isNaN(time)) {
        return fail(`"${raw}" is not an ISO 8601 timestamp.`)
      }
      // Stored timestamps are normalised ISO strings, so comparing normalised values is exact.
      const normalized = new Date(time).toISOString()
      return storableYear.test(normalized)
        ? normalized
        : fail(`"${raw}" lies outside the years 0001 to 9999 (UTC).`)
    }
    case 'integer': {
      const value = /^-?\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN
      return Number.isSafeInteger(value) && value >= int32.min && value <= int32.max
        ? value
        : fail(`"${raw}" is not an integer from ${int32.min} to ${int32.max}.`)
    }
    case 'enum':
      return kind.values.includes(raw) ? raw : fail(`"${raw}" is not one of ${kind.values.join(', ')}.`)
    case 'metadata':
      return fail('metadata takes a key: metadata.<key>:eq:<value>.')
    case 'string':
      if (raw.includes('\u0000')) {
        return fail('the value contains a NUL character.')
      }
      return raw.length <= 256 ? raw : fail('the value is longer than 256 characters.')
  }
}

/** The pagination envelope (docs/decisions/0003-lists.md) for a slice that starts at `offset`. */
export function toPage<T>(slice: ListSlice<T>, limit: number, page: number): Paginated<T> {
  const totalPages = Math.ceil(slice.totalCount / limit)
  const hasPrevPage = page > 0 && totalPages > 0
  const hasNextPage = slice.offset + limit < slice.totalCount
  return {
    data: slice.items,
    totalCount: slice.totalCount,
    page,
    limit,
    totalPages,
    hasPrevPage,
    hasNextPage,
    // Past the end, the previous page is the last one that has items.
    prevPage: hasPrevPage ? Math.min(page - 1, totalPages - 1) : null,
    nextPage: hasNextPage ? page + 1 : null,
  }
}

/** Page number of a slice: given in page mode, derived from the first item's position in keyset mode. */
export function pageOf(request: { page: number | undefined; limit: number }, offset: number): number {
  return request.page ?? Math.floor(offset / request.limit)
}
