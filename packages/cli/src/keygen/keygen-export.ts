/**
 * @module Keygen's account export (`keygen:export`, self-hosted Keygen), as its own source writes
 * it (keygen-sh/keygen-api at f70c4f4e00bc6b3357a05d46bef52df5ccdb9da9: lib/keygen/exporter/v1,
 * lib/keygen/importer/v1, config/initializers/msgpack.rb):
 *
 * - one byte, the format's version (1);
 * - then chunks, each an unsigned 64-bit big-endian length and that many bytes;
 * - a chunk is zlib-deflated; inside, when the export was made with a secret key, AES-256-GCM with
 *   the key SHA-256(secret key): a 16-byte tag, a 12-byte IV, the ciphertext (no associated data);
 * - inside that, MessagePack of `[className, [attributes, …]]`: a model's class name and up to 1,000
 *   records' database columns (snake_case). Times are MessagePack extensions 1 and 2 (a date 3)
 *   holding the MessagePack of their ISO 8601 text.
 *
 * The first chunk is the account; then every exportable association, a class at a time.
 */
import { createDecipheriv, createHash } from 'node:crypto'
import { inflateSync } from 'node:zlib'
import { decode, ExtensionCodec } from '@msgpack/msgpack'

export const keygenExportVersion = 1
const tagBytes = 16
const ivBytes = 12

/** A Keygen record: its columns as exported (times as ISO 8601 text). */
export type KeygenRecord = Readonly<Record<string, unknown>>

export interface KeygenChunk {
  readonly className: string
  readonly records: readonly KeygenRecord[]
}

/** The file is not a Keygen export this reads, or the secret key does not open it. */
export class KeygenExportError extends Error {}

/** Keygen's time and date extensions (1: TimeWithZone, 2: Time, 3: Date): the MessagePack of their text. */
const extensionCodec = new ExtensionCodec()
for (const type of [1, 2, 3]) {
  extensionCodec.register({ type, encode: () => null, decode: (data) => decode(data) })
}

/** Every chunk of the export, in order; throws KeygenExportError naming the first thing wrong. */
export function readKeygenExport(bytes: Uint8Array, secretKey: string | undefined): KeygenChunk[] {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (data.length === 0) {
    throw new KeygenExportError('the file is empty, not a Keygen export')
  }
  const version = data.readUInt8(0)
  if (version !== keygenExportVersion) {
    throw new KeygenExportError(
      `the file starts with version byte ${version}: this reads Keygen's export format version ${keygenExportVersion}`,
    )
  }
  const chunks: KeygenChunk[] = []
  for (let offset = 1; offset < data.length; ) {
    const number = chunks.length + 1
    if (offset + 8 > data.length) {
      throw new KeygenExportError(`chunk ${number} is cut short (no 8-byte length at byte ${offset})`)
    }
    const size = data.readBigUInt64BE(offset)
    offset += 8
    if (size === 0n) {
      break // Keygen's reader stops at a zero length
    }
    if (size > BigInt(data.length - offset)) {
      throw new KeygenExportError(
        `chunk ${number} is cut short: ${size} bytes announced, ${data.length - offset} left`,
      )
    }
    const chunk = data.subarray(offset, offset + Number(size))
    offset += Number(size)
    chunks.push(readChunk(chunk, number, secretKey))
  }
  return chunks
}

function readChunk(chunk: Buffer, number: number, secretKey: string | undefined): KeygenChunk {
  let packed: Buffer
  try {
    packed = inflateSync(chunk)
  } catch {
    throw new KeygenExportError(`chunk ${number} is not zlib data: not a Keygen export, or a damaged one`)
  }
  if (secretKey !== undefined) {
    packed = decrypt(packed, number, secretKey)
  }
  let value: unknown
  try {
    value = decode(packed, { extensionCodec })
  } catch {
    throw new KeygenExportError(
      secretKey === undefined
        ? `chunk ${number} is not MessagePack: the export is encrypted, pass its --secret-key`
        : `chunk ${number} is not MessagePack once decrypted`,
    )
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    typeof value[0] !== 'string' ||
    !Array.isArray(value[1]) ||
    !value[1].every((record) => typeof record === 'object' && record !== null && !Array.isArray(record))
  ) {
    throw new KeygenExportError(`chunk ${number} is not [className, [records…]]`)
  }
  const [className, records] = value as [string, Record<string, unknown>[]]
  return { className, records: records.map(withTimesAsText) }
}

function decrypt(data: Buffer, number: number, secretKey: string): Buffer {
  if (data.length < tagBytes + ivBytes) {
    throw new KeygenExportError(
      `chunk ${number} is too short to be encrypted: is the export encrypted at all?`,
    )
  }
  const key = createHash('sha256').update(secretKey, 'utf8').digest()
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(tagBytes, tagBytes + ivBytes))
  decipher.setAuthTag(data.subarray(0, tagBytes))
  try {
    return Buffer.concat([decipher.update(data.subarray(tagBytes + ivBytes)), decipher.final()])
  } catch {
    throw new KeygenExportError(
      `chunk ${number} does not decrypt with this secret key (a wrong --secret-key, or an export made without one)`,
    )
  }
}

/** MessagePack's own timestamps (extension -1) come back as Dates: as text, like Keygen's. */
function withTimesAsText(record: Record<string, unknown>): KeygenRecord {
  return Object.fromEntries(
    Object.entries(record).map(([column, value]) => [
      column,
      value instanceof Date ? value.toISOString() : value,
    ]),
  )
}
