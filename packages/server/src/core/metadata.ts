import { type Metadata, type MetadataInput, maxMetadataBytes, maxMetadataKeys } from '@keyturn/protocol'
import { InvalidInputError } from './errors.js'

/**
 * Metadata on create: keys given `null` are left out (stored metadata never holds null). The schema
 * has bounded keys and values; the serialised size needs this check.
 */
export function newMetadata(input: MetadataInput | undefined): Metadata {
  return mergeMetadata({}, input)
}

/** PATCH semantics (as Stripe's): each key given replaces that key, `null` removes it, others stay. */
export function mergeMetadata(current: Metadata, input: MetadataInput | undefined): Metadata {
  if (input === undefined) {
    return current
  }
  const merged: Record<string, string | number | boolean> = { ...current }
  for (const [key, value] of Object.entries(input)) {
    if (value === null) {
      delete merged[key]
    } else if (typeof value === 'number' && !Number.isFinite(value)) {
      // JSON.parse reads 1e400 as Infinity, which JSON cannot write back.
      throw new InvalidInputError(`#/metadata/${key}`, `metadata.${key} must be a finite number.`)
    } else {
      merged[key] = value
    }
  }
  const keys = Object.keys(merged).length
  if (keys > maxMetadataKeys) {
    throw new InvalidInputError(
      '#/metadata',
      `metadata may hold at most ${maxMetadataKeys} keys; this change makes ${keys}.`,
    )
  }
  const bytes = new TextEncoder().encode(JSON.stringify(merged)).length
  if (bytes > maxMetadataBytes) {
    throw new InvalidInputError(
      '#/metadata',
      `metadata must be at most ${maxMetadataBytes} bytes as JSON; this change makes ${bytes}.`,
    )
  }
  return merged
}
