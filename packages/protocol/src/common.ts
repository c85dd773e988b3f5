import { type Static, type TSchema, Type } from 'typebox'

/** An ISO 8601 UTC timestamp, e.g. `2030-01-01T00:00:00.000Z`. */
export const TimestampSchema = Type.String({ format: 'date-time', examples: ['2030-01-01T00:00:00.000Z'] })
export type Timestamp = Static<typeof TimestampSchema>

const idTail = { maxLength: 64 }

export const ProductIdSchema = Type.TemplateLiteral([Type.Literal('prd_'), Type.String()], {
  ...idTail,
  examples: ['prd_3kTMd9qA8xYb2VnLr5sPwZ'],
})
export type ProductId = Static<typeof ProductIdSchema>

export const LicenseIdSchema = Type.TemplateLiteral([Type.Literal('lic_'), Type.String()], {
  ...idTail,
  examples: ['lic_7fQx2mNc4RtYp9LkWv3bHs'],
})
export type LicenseId = Static<typeof LicenseIdSchema>

export const ApiKeyIdSchema = Type.TemplateLiteral([Type.Literal('key_'), Type.String()], {
  ...idTail,
  examples: ['key_5bVn8cXz2LkJh4GfDs6aQw'],
})
export type ApiKeyId = Static<typeof ApiKeyIdSchema>

export const IdParamsSchema = <T extends TSchema>(id: T) =>
  Type.Object({ id }, { additionalProperties: false })

/** Shortest and longest lifetime a license token may be given (seconds): 1 hour and 1 year. */
export const minTokenTtlSeconds = 60 * 60
export const maxTokenTtlSeconds = 365 * 24 * 60 * 60
/** The longest lifetime a policy may allow a token or a license file (seconds): a hundred years. */
export const maxLongLifetimeSeconds = 100 * 365 * 24 * 60 * 60

/** Page size when no `limit` is given (docs/decisions/0003-lists.md). */
export const defaultPageLimit = 30
/** Largest accepted `limit` (docs/decisions/0003-lists.md). */
export const maxPageLimit = 100
/** Bound on `page` so an offset never overflows a database integer. */
export const maxPage = 1_000_000

export const SortOrderSchema = Type.Enum(['asc', 'desc'])
export type SortOrder = Static<typeof SortOrderSchema>

/** Query parameters shared by every list endpoint (docs/decisions/0003-lists.md). */
export const listQueryProperties = {
  page: Type.Optional(
    Type.Integer({ minimum: 0, maximum: maxPage, description: 'Page number; the first page is 0.' }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: maxPageLimit,
      description: `Items per page, 1 to ${maxPageLimit}; default ${defaultPageLimit}.`,
    }),
  ),
  sort: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'Sort as `field:order`, order `asc` or `desc`; ties are broken by `id`.',
      examples: ['createdAt:desc'],
    }),
  ),
  filter: Type.Optional(
    Type.String({
      maxLength: 2048,
      description:
        'Rules joined by `,`, each `field:operator:value`; operators `eq`, `ne`, `lt`, `lte`, `gt`, `gte`, `in` (values separated by `|`), `null`, `notnull`.',
    }),
  ),
  starting_after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'Id of an item: return the items after it in the requested order. Not with `page`.',
    }),
  ),
}

/** The paginated envelope of every list response (docs/decisions/0003-lists.md); its example is a page of the item's. */
export const PaginatedSchema = <T extends TSchema>(item: T) =>
  Type.Object(
    {
      data: Type.Array(item),
      totalCount: Type.Integer({ minimum: 0 }),
      page: Type.Integer({ minimum: 0 }),
      limit: Type.Integer({ minimum: 1 }),
      totalPages: Type.Integer({ minimum: 0 }),
      hasPrevPage: Type.Boolean(),
      hasNextPage: Type.Boolean(),
      prevPage: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      nextPage: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    },
    { additionalProperties: false, ...pageExample(item) },
  )

/** The second page of a list of three, limit 1, holding the item's example. */
function pageExample(item: TSchema): { examples?: unknown[] } {
  const examples = 'examples' in item ? item.examples : undefined
  if (!Array.isArray(examples) || examples.length === 0) {
    return {}
  }
  const page = { totalCount: 3, page: 1, limit: 1, totalPages: 3, hasPrevPage: true, hasNextPage: true }
  return { examples: [{ data: [examples[0]], ...page, prevPage: 0, nextPage: 2 }] }
}

export interface Paginated<T> {
  data: T[]
  totalCount: number
  page: number
  limit: number
  totalPages: number
  hasPrevPage: boolean
  hasNextPage: boolean
  prevPage: number | null
  nextPage: number | null
}

export const CustomerIdSchema = Type.TemplateLiteral([Type.Literal('cus_'), Type.String()], {
  ...idTail,
  examples: ['cus_4nQw8ZkT2vLm6XcPb9RsJd'],
})
export type CustomerId = Static<typeof CustomerIdSchema>

export const PolicyIdSchema = Type.TemplateLiteral([Type.Literal('pol_'), Type.String()], {
  ...idTail,
  examples: ['pol_8sKd2LqW5nXv3BzTm7YcRf'],
})
export type PolicyId = Static<typeof PolicyIdSchema>

export const EntitlementIdSchema = Type.TemplateLiteral([Type.Literal('ent_'), Type.String()], {
  ...idTail,
  examples: ['ent_2hGt6VpX9mQc4LwNs8KbZy'],
})
export type EntitlementId = Static<typeof EntitlementIdSchema>
