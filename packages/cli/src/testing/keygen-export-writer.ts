/**
 * @module Writes a Keygen account export as Keygen's exporter does (see keygen/keygen-export.ts for
 * the format and the commit it was read from), for tests: records' columns as given, times wrapped
 * in `keygenTime` (packed as Keygen packs a Time: extension 2 holding the MessagePack of its text).
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import { ExtensionCodec, encode } from '@msgpack/msgpack'

/** A time column, as Keygen's Time (`Time#iso8601(6)`). */
export class KeygenTime {
  readonly iso: string
  constructor(iso: string) {
    this.iso = iso
  }
}

export const keygenTime = (iso: string) => new KeygenTime(iso)

const extensionCodec = new ExtensionCodec()
extensionCodec.register({
  type: 2,
  encode: (value) =>
    value instanceof KeygenTime ? encode(value.iso.replace(/\.(\d{3})Z$/, '.$1000Z')) : null,
  decode: () => null,
})

export interface KeygenChunkInput {
  readonly className: string
  readonly records: readonly Record<string, unknown>[]
}

/** Version byte 1, then each chunk: 64-bit big-endian length, deflate([encrypt](msgpack([class, records]))). */
export function writeKeygenExport(chunks: readonly KeygenChunkInput[], secretKey?: string): Buffer {
  const parts: Buffer[] = [Buffer.from([1])]
  for (const { className, records } of chunks) {
    // Keygen exports 1,000 records per chunk.
    for (let start = 0; start === 0 || start < records.length; start += 1000) {
      const packed = Buffer.from(encode([className, records.slice(start, start + 1000)], { extensionCodec }))
      const data = deflateSync(secretKey === undefined ? packed : encrypt(packed, secretKey), { level: 9 })
      const size = Buffer.alloc(8)
      size.writeBigUInt64BE(BigInt(data.length))
      parts.push(size, data)
    }
  }
  return Buffer.concat(parts)
}

function encrypt(plaintext: Buffer, secretKey: string): Buffer {
  const key = createHash('sha256').update(secretKey, 'utf8').digest()
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return Buffer.concat([cipher.getAuthTag(), iv, ciphertext])
}
