import { type Static, Type } from 'typebox'
import { LicenseIdSchema, ProductIdSchema } from './common.js'

export const SearchQuerySchema = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        'A license key (with or without dashes, any case), a customer email (exact, case-insensitive) or name (prefix, case-insensitive), a machine fingerprint (exact) or name (prefix, case-insensitive), or an id (`lic_…`, `cus_…`, `act_…`).',
      examples: ['ada@example.com'],
    }),
  },
  { additionalProperties: false },
)
export type SearchQuery = Static<typeof SearchQuerySchema>

export const SearchHitSchema = Type.Object(
  {
    object: Type.Union([Type.Literal('License'), Type.Literal('Customer'), Type.Literal('Activation')]),
    id: Type.String({ description: "The object's id (`lic_…`, `cus_…`, `act_…`)." }),
    title: Type.String({
      description: 'What to show first: the key, the email, the machine name or fingerprint.',
    }),
    subtitle: Type.String({
      description: "What tells two hits apart: the product, the customer's name, the license.",
    }),
    matched: Type.Union(
      [
        Type.Literal('id'),
        Type.Literal('key'),
        Type.Literal('email'),
        Type.Literal('name'),
        Type.Literal('fingerprint'),
      ],
      { description: 'Which field the query matched.' },
    ),
    productId: Type.Optional(ProductIdSchema),
    licenseId: Type.Optional(LicenseIdSchema),
  },
  { additionalProperties: false },
)
export type SearchHit = Static<typeof SearchHitSchema>

export const SearchResultSchema = Type.Object(
  {
    object: Type.Literal('List'),
    data: Type.Array(SearchHitSchema, { maxItems: 20 }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        object: 'List',
        data: [
          {
            object: 'Customer',
            id: 'cus_2fQk1bX9mT4nR7sV',
            title: 'ada@example.com',
            subtitle: 'Ada Lovelace',
            matched: 'email',
          },
          {
            object: 'License',
            id: 'lic_01J8ZK4N7Q2M5P9R',
            title: '7K3QD-Q4M2X-9ZP1R-T8W5V-B6N0H',
            subtitle: 'prd_5mXo1q7Rr2Wc9Tz — ada@example.com',
            matched: 'key',
            productId: 'prd_5mXo1q7Rr2Wc9Tz',
            licenseId: 'lic_01J8ZK4N7Q2M5P9R',
          },
        ],
      },
    ],
  },
)
export type SearchResult = Static<typeof SearchResultSchema>
