/**
 * @module Writes license files (docs/guides/offline.md, "The file format"); `@keyturn/client`'s
 * `verifyLicenseFile` reads them. The layout and its constants live in `@keyturn/protocol`.
 */
import { createCipheriv, hkdf, pbkdf2, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import {
  canonicalLicenseKey,
  type LicenseFileEncryption,
  type LicenseFileHeader,
  type LicenseFilePayload,
  licenseFileBegin,
  licenseFileEnd,
  licenseFileFormat,
  licenseFileKdfInfo,
  licenseFileLineLength,
  licenseFilePbkdf2Iterations,
} from '@keyturn/protocol'
import type { Ed25519Sign } from '../tokens/ed25519.js'

const hkdfAsync = promisify(hkdf)
const pbkdf2Async = promisify(pbkdf2)

export interface LicenseFileContent {
  readonly keyId: string
  readonly productId: string
  readonly issued: Date
  /** `null`: the file never expires. */
  readonly expiry: Date | null
  readonly payload: LicenseFilePayload
  /** The license key as stored: it names the header's `keyFormat` and keys the encryption. */
  readonly licenseKey: string
  /** Encrypts the payload under a key derived from the license key (plus this fingerprint when given). */
  readonly encrypt?: { readonly fingerprint?: string }
  /** Random bytes for the salt and iv; fixed only by the conformance vectors. */
  readonly random?: (size: number) => Buffer
}

/** `keyturn` for a key of Keyturn's own format (25 Crockford characters), else `custom`. */
export function keyFormatOf(licenseKey: string): 'keyturn' | 'custom' {
  return canonicalLicenseKey(licenseKey) === licenseKey && /^[0-9A-Z]{5}(-[0-9A-Z]{5}){4}$/.test(licenseKey)
    ? 'keyturn'
    : 'custom'
}

/** The armoured, signed (and, when asked, encrypted) license file. */
export async function writeLicenseFile(content: LicenseFileContent, sign: Ed25519Sign): Promise<string> {
  const { licenseKey } = content
  const keyFormat = keyFormatOf(licenseKey)
  const clear = Buffer.from(JSON.stringify(content.payload), 'utf8')
  let encryption: LicenseFileEncryption | undefined
  let key: Buffer | undefined
  if (content.encrypt !== undefined) {
    const { fingerprint } = content.encrypt
    const random = content.random ?? randomBytes
    const salt = random(16)
    const material = Buffer.from(
      fingerprint === undefined ? licenseKey : `${licenseKey}\n${fingerprint}`,
      'utf8',
    )
    encryption = {
      alg: 'A256GCM',
      kdf: keyFormat === 'keyturn' ? 'HKDF-SHA256' : 'PBKDF2-SHA256',
      ...(keyFormat === 'keyturn' ? {} : { iterations: licenseFilePbkdf2Iterations }),
      salt: salt.toString('base64url'),
      iv: random(12).toString('base64url'),
      machineBound: fingerprint !== undefined,
    }
    key =
      keyFormat === 'keyturn'
        ? Buffer.from(await hkdfAsync('sha256', material, salt, licenseFileKdfInfo, 32))
        : await pbkdf2Async(material, salt, licenseFilePbkdf2Iterations, 32, 'sha256')
  }
  const header: LicenseFileHeader = {
    format: licenseFileFormat,
    alg: 'EdDSA',
    kid: content.keyId,
    productId: content.productId,
    keyFormat,
    issued: content.issued.toISOString(),
    expiry: content.expiry?.toISOString() ?? null,
    ...(encryption === undefined ? {} : { encryption }),
  }
  const encodedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url')
  let payload = clear
  if (encryption !== undefined && key !== undefined) {
    const cipher = createCipheriv('aes-256-gcm', key, Buffer.from(encryption.iv, 'base64url'))
    cipher.setAAD(Buffer.from(encodedHeader, 'latin1'))
    payload = Buffer.concat([cipher.update(clear), cipher.final(), cipher.getAuthTag()])
  }
  const input = `${encodedHeader}.${payload.toString('base64url')}`
  const signature = await sign(Buffer.from(input, 'latin1'))
  const body = `${input}.${signature.toString('base64url')}`
  const lines = body.match(new RegExp(`.{1,${licenseFileLineLength}}`, 'g')) ?? []
  return `${licenseFileBegin}\n${lines.join('\n')}\n${licenseFileEnd}\n`
}
