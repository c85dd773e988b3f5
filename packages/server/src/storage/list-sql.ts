/**
 * Translates a parsed list request (core/list-query.ts) into parameterised SQL for both engines:
 * field names come only from each store's allow-list, values only as bound parameters.
 */
import type { SortOrder } from '@keyturn/protocol'
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely'
import { InvalidInputError } from '../core/errors.js'
import type { FilterRule, FilterValue, ListRequest, ListSlice } from '../core/list-query.js'
import type { Database } from './database.js'
import { isSqlite } from './write-transaction.js'

/**
 * A sortable expression over a table alias, for one engine (`sqlite`: SQLite, else PostgreSQL);
 * never NULL, so keyset comparisons stay total.
 */
export type SortExpression = (alias: string, sqlite: boolean) => RawBuilder<unknown>

/** How one filter field becomes SQL: a plain column, or a translator for derived fields (status). */
export type FilterColumn<F extends string> =
  | { readonly column: string }
  | { readonly translate: (rule: FilterRule<F>) => RawBuilder<SqlBool> }

export interface ListTable<S extends string, F extends string> {
  readonly table: keyof Database & string
  readonly sort: { readonly [K in S]: SortExpression }
  readonly filters: { readonly [K in F]: FilterColumn<F> }
  /** Computed columns read beside the row's own (a license's entitlement codes). */
  readonly columns?: RawBuilder<unknown>
}

/**
 * PostgreSQL text cannot hold NUL (U+0000) and fails the whole query on one, so a value containing it
 * can match no row: callers answer "not found" without asking the database (SQLite would agree).
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000')
}

export const column =
  (name: string): SortExpression =>
  (alias) =>
    sql.ref(`${alias}.${name}`)

/**
 * A nullable column sorted with NULL as `whenNull`. The value is written as a literal, not a bound
 * parameter, so the expression matches an index on the same expression (migration 03).
 */
export const columnOr =
  (name: string, whenNull: string | number): SortExpression =>
  (alias) =>
    sql`coalesce(${sql.ref(`${alias}.${name}`)}, ${sql.lit(whenNull)})`

/**
 * Text sorted case-insensitively and alike on both engines: ASCII letters folded, then compared as
 * bytes (UTF-8's byte order is code point order). SQLite's `lower()` folds ASCII only while
 * PostgreSQL's folds by the database's locale, and PostgreSQL's default collation (en_US and the
 * like) skips spaces and punctuation at first: "Éclair", "İstanbul", "a b", "a-c" and "ab" sorted
 * differently on the two engines. NULL sorts as `whenNull`. No index serves these sorts (names).
 */
export const foldedText =
  (name: string, whenNull?: string): SortExpression =>
  (alias, sqlite) => {
    const ref = sql.ref(`${alias}.${name}`)
    const text = whenNull === undefined ? ref : sql`coalesce(${ref}, ${sql.lit(whenNull)})`
    return sqlite
      ? sql`lower(${text})`
      : sql`translate(${text}, ${sql.lit(asciiUpper)}, ${sql.lit(asciiUpper.toLowerCase())}) collate "C"`
  }

/** A text column compared as bytes on both engines (SQLite's default; PostgreSQL's `C` collation). */
export const bytewise =
  (name: string): SortExpression =>
  (alias, sqlite) =>
    sqlite ? sql.ref(`${alias}.${name}`) : sql`${sql.ref(`${alias}.${name}`)} collate "C"`

const asciiUpper = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'

const comparators = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const

/** A rule over a plain column; `ne` also matches NULL, as "not equal to the value" reads. */
export function compareColumn<F extends string>(
  ref: RawBuilder<unknown>,
  rule: FilterRule<F>,
): RawBuilder<SqlBool> {
  switch (rule.operator) {
    case 'null':
      return sql<SqlBool>`${ref} is null`
    case 'notnull':
      return sql<SqlBool>`${ref} is not null`
    case 'in':
      return sql<SqlBool>`${ref} in (${sql.join(rule.values.map((value: FilterValue) => sql`${value}`))})`
    case 'ne':
      return sql<SqlBool>`(${ref} <> ${rule.value} or ${ref} is null)`
    default:
      return sql<SqlBool>`${ref} ${sql.raw(comparators[rule.operator])} ${rule.value}`
  }
}

function filterCondition<S extends string, F extends string>(
  spec: ListTable<S, F>,
  rule: FilterRule<F>,
): RawBuilder<SqlBool> {
  const target: FilterColumn<F> = spec.filters[rule.field]
  return 'translate' in target
    ? target.translate(rule)
    : compareColumn(sql.ref(`${spec.table}.${target.column}`), rule)
}

function direction(order: SortOrder): RawBuilder<unknown> {
  return sql.raw(order === 'asc' ? 'asc' : 'desc')
}

/**
 * Fast path (docs/decisions/0026-list-totals-from-counts.md): how many rows match, per range ("bucket") of one sort expression, from counts
 * the writes keep, so that a list neither visits every matching row to count them nor every skipped
 * one to find a deep page or a cursor's position. A store offers one for the requests its counts can
 * answer (licenses: licenses/kysely-license-counts.ts, which has the figures).
 */
export interface Histogram<S extends string> {
  /** The sort field whose expression the buckets divide: positions use them only under this sort. */
  readonly field: S
  /**
   * Ascending and disjoint, covering every matching row. Bounds are text that compares as the sort
   * expression does and binds against it; `to` is exclusive (undefined: no end). `count` is exact,
   * or undefined where the filter cuts through the bucket: selectPage counts that one from the index.
   */
  readonly buckets: readonly { readonly from: string; readonly to?: string; readonly count?: number }[]
  /** A sort value as the database returns it (a cursor's), as the buckets' text. */
  readonly text: (value: unknown) => string
}

type Bucket = Histogram<string>['buckets'][number]

/** A bucket with its count known. */
interface CountedBucket {
  readonly range: Bucket
  readonly count: number
}

/**
 * Runs a list request: `scope` holds the conditions that decide visibility (product scoping),
 * the request's filters narrow further. Rows come back as the table's rows, in order. With a
 * `histogram` for this request, the total and the positions come from it (see Histogram).
 */
export async function selectPage<Row, S extends string, F extends string>(
  db: Kysely<Database>,
  spec: ListTable<S, F>,
  request: ListRequest<S, F>,
  scope: readonly RawBuilder<SqlBool>[],
  histogram?: Histogram<S>,
): Promise<ListSlice<Row>> {
  const table = sql.table(spec.table)
  const visible = sql.join([sql`1 = 1`, ...scope], sql` and `)
  const matching = sql.join(
    [visible, ...request.filters.map((rule) => filterCondition(spec, rule))],
    sql` and `,
  )
  const sqlite = isSqlite(db)
  const sortExpression = spec.sort[request.sort.field]
  const sortBy = (alias: string) => sortExpression(alias, sqlite)
  const order = direction(request.sort.order)

  const id = sql.ref(`${spec.table}.id`)
  // Fast path: with a histogram, the total and the page's position come from kept counts
  // plus at most a bucket of index entries, not from visiting every matching entry (1M licenses,
  // starting_after deep in the list, one client: SQLite 91 → 12 ms per list, PostgreSQL 125 → 17 ms;
  // docs/decisions/0026-list-totals-from-counts.md).
  const buckets =
    histogram === undefined ? undefined : await countBuckets(db, spec, histogram, matching, sqlite)
  // Buckets locate positions only when they divide the list's own sort.
  const located = histogram?.field === request.sort.field ? buckets : undefined
  const ascending = request.sort.order === 'asc'

  let window = matching
  let offset = (request.page ?? 0) * request.limit
  let skip = offset
  if (request.startingAfter === undefined && located !== undefined) {
    // The bucket the page starts in: the rows before it are the whole buckets before it.
    const seek = seekBucket(located, offset, ascending)
    if (seek === undefined) {
      return { items: [], totalCount: total(located), offset }
    }
    const here = sortBy(spec.table)
    const bound = ascending ? seek.bucket.range.from : seek.bucket.range.to
    if (bound !== undefined) {
      window = sql.join(
        [matching, sql<SqlBool>`${here} ${sql.raw(ascending ? '>=' : '<')} ${bound}`],
        sql` and `,
      )
    }
    skip = offset - seek.before
  }
  if (request.startingAfter !== undefined) {
    const cursor = request.startingAfter
    // The cursor's sort value, read by the same expression the list sorts by and bound back as a
    // parameter, so both engines can seek the sort index to it.
    const found = isStorableText(cursor)
      ? await sql<{ value: unknown }>`
          select ${sortBy(spec.table)} as value from ${table} where ${sql.ref(`${spec.table}.id`)} = ${cursor} and ${visible}`.execute(
          db,
        )
      : { rows: [] }
    const [position] = found.rows
    if (position === undefined) {
      throw new InvalidInputError(
        '#/starting_after',
        `\`starting_after\` names no item in this list: "${cursor}".`,
      )
    }
    const here = sortBy(spec.table)
    // Spelled out rather than as a row value `(here, id) > (value, cursor)`: SQLite seeks an index
    // on an expression only for a plain range on it.
    const after =
      request.sort.order === 'asc'
        ? sql<SqlBool>`(${here} >= ${position.value} and (${here} > ${position.value} or ${id} > ${cursor}))`
        : sql<SqlBool>`(${here} <= ${position.value} and (${here} < ${position.value} or ${id} < ${cursor}))`
    // The items before the cursor, as a plain range on the sort expression (exactly `not after`:
    // neither side is ever NULL), so the count is an index-only range scan of the sort index rather
    // than a heap scan of every matching row (docs/decisions/0003-lists.md).
    const notAfter =
      request.sort.order === 'asc'
        ? sql<SqlBool>`(${here} <= ${position.value} and (${here} < ${position.value} or ${id} <= ${cursor}))`
        : sql<SqlBool>`(${here} >= ${position.value} and (${here} > ${position.value} or ${id} >= ${cursor}))`
    if (located === undefined) {
      const before = await sql<{ count: number | string }>`
        select count(*) as count from ${table} where ${matching} and ${notAfter}`.execute(db)
      offset = Number(before.rows[0]?.count ?? 0) // pg returns count(*) as a string
    } else {
      // The whole buckets before the cursor's, then the rest from the index: at most a bucket.
      const value = histogram?.text(position.value) ?? ''
      const whole = ascending
        ? bucketsBefore(located, value)
        : located.filter((bucket) => bucket.range.from > value)
      const edge = ascending ? whole.at(-1)?.range.to : whole[0]?.range.from
      const rest =
        edge === undefined
          ? notAfter
          : sql<SqlBool>`${notAfter} and ${here} ${sql.raw(ascending ? '>=' : '<')} ${edge}`
      const before = await sql<{ count: number | string }>`
        select count(*) as count from ${table} where ${matching} and ${rest}`.execute(db)
      offset = total(whole) + Number(before.rows[0]?.count ?? 0)
    }
    window = sql.join([matching, after], sql` and `)
    skip = 0
  }

  // Fast path, a deferred join: the page's ids are found first, reading only the sort
  // index (the filter columns ride along in it, migration 03), and only those `limit` rows are then
  // read from the table. Reading whole rows while skipping OFFSET made PostgreSQL sort every
  // matching row instead (docs/decisions/0003-lists.md).
  const ordering = sql`order by ${sortBy(spec.table)} ${order}, ${id} ${order}`
  const selected = spec.columns === undefined ? sql`*` : sql`${table}.*, ${spec.columns}`
  const rows = await sql<Row>`
    select ${selected} from ${table} where ${id} in (
      select ${id} from ${table} where ${window} ${ordering}
      limit ${request.limit} offset ${skip})
    ${ordering}`.execute(db)
  if (buckets !== undefined) {
    return { items: rows.rows, totalCount: total(buckets), offset }
  }
  const counted = await sql<{
    count: number | string
  }>`select count(*) as count from ${table} where ${matching}`.execute(db)
  return { items: rows.rows, totalCount: Number(counted.rows[0]?.count ?? 0), offset }
}

/** The histogram's buckets with every count known: those the filter cuts through counted from the index. */
async function countBuckets<S extends string, F extends string>(
  db: Kysely<Database>,
  spec: ListTable<S, F>,
  histogram: Histogram<S>,
  matching: RawBuilder<unknown>,
  sqlite: boolean,
): Promise<CountedBucket[]> {
  const here = spec.sort[histogram.field](spec.table, sqlite)
  return Promise.all(
    histogram.buckets.map(async (range) => {
      if (range.count !== undefined) {
        return { range, count: range.count }
      }
      const { from, to } = range
      const within = to === undefined ? sql`${here} >= ${from}` : sql`${here} >= ${from} and ${here} < ${to}`
      const counted = await sql<{ count: number | string }>`
        select count(*) as count from ${sql.table(spec.table)} where ${matching} and ${within}`.execute(db)
      return { range, count: Number(counted.rows[0]?.count ?? 0) }
    }),
  )
}

const total = (buckets: readonly CountedBucket[]) => buckets.reduce((sum, bucket) => sum + bucket.count, 0)

/** The buckets wholly before `value` (asking `to` of one bucket only: it may be worked out). */
function bucketsBefore(buckets: readonly CountedBucket[], value: string): CountedBucket[] {
  const starting = buckets.filter((bucket) => bucket.range.from <= value)
  const to = starting.at(-1)?.range.to
  return to === undefined || to > value ? starting.slice(0, -1) : starting
}

/** The bucket holding position `offset` in the list's order, and how many rows come before it. */
function seekBucket(
  buckets: readonly CountedBucket[],
  offset: number,
  ascending: boolean,
): { bucket: CountedBucket; before: number } | undefined {
  let before = 0
  for (const bucket of ascending ? buckets : [...buckets].reverse()) {
    if (before + bucket.count > offset) {
      return { bucket, before }
    }
    before += bucket.count
  }
  return undefined
}
