import { readFile } from 'node:fs/promises'
import { LicenseTokenError, type PublicKeyInput, validateLicenseToken } from '@keyturn/client'
import type { Command } from 'commander'
import { collect, json } from '../checks.js'
import { CommandFailed, UsageError } from '../errors.js'
import type { Io } from '../io.js'
import { printFields, printJson } from '../output.js'

interface VerifyOptions {
  readonly product: string
  readonly publicKey?: string
  readonly jwk?: string
  readonly fingerprint?: string
  readonly entitlement?: string[]
  readonly json?: boolean
}

/** `keyturn token verify`: offline, with the client library's validateLicenseToken; no server. */
export function registerToken(program: Command, io: Io): void {
  const token = program
    .command('token')
    .description('License tokens, checked offline')
    .addHelpText(
      'after',
      '\nExample:\n  keyturn token verify "$TOKEN" --product prd_3kTMd9qA8xYb2VnLr5sPwZ --public-key product.pem',
    )

  token
    .command('verify <token>')
    .description('Check a license token offline with the product public key; exits 1 when it is not valid')
    .requiredOption('--product <id>', 'the product the token must be for')
    .option(
      '--public-key <file>',
      'the product public key, PEM (keyturn products get ID --json | jq -r .publicKey)',
    )
    .option(
      '--jwk <file>',
      'the product public key as a JWK, a JSON array of JWKs, or a JWK set {"keys": […]}',
    )
    .option('--fingerprint <fingerprint>', "this machine's fingerprint, for a machine-bound token")
    .option('--entitlement <code>', 'fail unless the token carries this entitlement (repeatable)', collect)
    .option('--json', 'print the validation result as JSON')
    .addHelpText(
      'after',
      '\nExample:\n  keyturn token verify "$TOKEN" --product prd_3kTMd9qA8xYb2VnLr5sPwZ --public-key product.pem',
    )
    .action(async (text: string, options: VerifyOptions) => {
      const publicKey = await readPublicKey(options)
      try {
        const result = await validateLicenseToken({
          productId: options.product,
          publicKey,
          token: text,
          ...(options.fingerprint === undefined ? {} : { fingerprint: options.fingerprint }),
          ...(options.entitlement === undefined ? {} : { requireEntitlements: options.entitlement }),
        })
        if (options.json === true) {
          printJson(io, result)
          return
        }
        io.print('valid')
        io.print('')
        printFields(io, [
          ['license', result.licenseId],
          ['product', result.productId],
          ['expires', result.expiresAt],
          ['issued', result.issuedAt],
          ['fingerprint', result.fingerprint],
          ['entitlements', result.entitlements.join(' ')],
          ['custom fields', JSON.stringify(result.customFields)],
        ])
      } catch (error) {
        if (error instanceof LicenseTokenError) {
          throw new CommandFailed(`${error.code}: ${error.message}`)
        }
        throw error
      }
    })
}

async function readPublicKey(options: VerifyOptions): Promise<PublicKeyInput | PublicKeyInput[]> {
  if ((options.publicKey === undefined) === (options.jwk === undefined)) {
    throw new UsageError('give the product public key with either --public-key FILE or --jwk FILE')
  }
  const file = options.publicKey ?? options.jwk ?? ''
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : error}`)
  })
  if (options.publicKey !== undefined) {
    return text
  }
  const value = json(text, '--jwk')
  const keys = isObject(value) && Array.isArray(value.keys) ? value.keys : value
  const list = Array.isArray(keys) ? keys : [keys]
  if (list.length === 0 || !list.every(isObject)) {
    throw new UsageError('--jwk must hold a JWK object, an array of them, or {"keys": […]}')
  }
  return list
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
