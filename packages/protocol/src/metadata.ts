import { type Static, Type } from 'typebox'

/** At most this many keys in one `metadata` object. */
export const maxMetadataKeys = 50
/** Largest `metadata`, as serialised JSON (bytes). */
export const maxMetadataBytes = 8192
export const maxMetadataStringLength = 500
/** A metadata key: 1 to 40 characters of `[A-Za-z0-9_.-]`. */
export const metadataKeyPattern = '^[A-Za-z0-9_.-]{1,40}$'

export const MetadataValueSchema = Type.Union([
  Type.String({ maxLength: maxMetadataStringLength }),
  Type.Number(),
  Type.Boolean(),
])

/** Metadata as stored and shown: never holds null (a null on input removes the key). */
export const MetadataSchema = Type.Record(Type.String({ pattern: metadataKeyPattern }), MetadataValueSchema, {
  additionalProperties: false,
  maxProperties: maxMetadataKeys,
  description: `Your own key-value pairs (at most ${maxMetadataKeys} keys of \`[A-Za-z0-9_.-]{1,40}\`; values strings up to ${maxMetadataStringLength} characters, numbers or booleans; ${maxMetadataBytes} bytes serialised).`,
  examples: [{ stripeSubscriptionId: 'sub_1QhZ8f2eZvKYlo2C', plan: 'pro' }],
})
export type Metadata = Static<typeof MetadataSchema>

/** Metadata in a create or PATCH body: on PATCH each key given replaces that key, and `null` removes it. */
export const MetadataInputSchema = Type.Record(
  Type.String({ pattern: metadataKeyPattern }),
  Type.Union([MetadataValueSchema, Type.Null()]),
  {
    additionalProperties: false,
    maxProperties: maxMetadataKeys,
    description: `Key-value pairs (at most ${maxMetadataKeys} keys of \`[A-Za-z0-9_.-]{1,40}\`; values strings up to ${maxMetadataStringLength} characters, finite numbers, booleans, or \`null\` to remove the key; ${maxMetadataBytes} bytes serialised). On update, keys not given are kept.`,
    examples: [{ stripeSubscriptionId: 'sub_1QhZ8f2eZvKYlo2C', plan: 'pro' }],
  },
)
export type MetadataInput = Static<typeof MetadataInputSchema>
