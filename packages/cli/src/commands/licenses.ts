import type { LicenseResource } from '@keyturn/client'
import {
  CreateLicenseBodySchema,
  CreateLicenseTokenBodySchema,
  IncrementUsageBodySchema,
  type LicenseId,
  ListLicensesQuerySchema,
  RenewLicenseBodySchema,
  UpdateLicenseBodySchema,
  ValidateLicenseBodySchema,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import {
  checked,
  collect,
  dateTime,
  defined,
  entitlementFlags,
  integer,
  json,
  metadataFlags,
  orNull,
} from '../checks.js'
import { CommandFailed } from '../errors.js'
import type { Io } from '../io.js'
import { exportLicenses } from '../license-export.js'
import { importLicenses } from '../license-import.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printFields, printJson, show } from '../output.js'
import { registerLicenseFileCommand } from './offline.js'

const fieldFlags = {
  productId: '--product',
  maxActivations: '--max-activations',
  expirationDate: '--expiration-date',
  key: 'KEY',
  fingerprint: '--fingerprint',
  ttl: '--ttl',
  customPayload: '--custom-payload',
  heartbeatTtl: '--heartbeat-ttl',
  maxUses: '--max-uses',
  increment: '--increment',
  customerId: '--customer',
  policyId: '--policy',
  entitlements: '--entitlement',
  metadata: '--metadata',
  duration: '--duration',
  expiry: '--expiry',
}

/** What the flags take for null. */
const nullWords = {
  maxActivations: 'unlimited',
  expirationDate: 'never',
  heartbeatTtl: 'none',
  maxUses: 'unlimited',
  customerId: 'none',
  policyId: 'none',
}

interface TermsOptions {
  readonly maxActivations?: string
  readonly expirationDate?: string
  readonly heartbeatTtl?: string
  readonly maxUses?: string
  readonly customer?: string
  readonly entitlement?: string[]
  /** false with --no-entitlements (update). */
  readonly entitlements?: boolean
  readonly metadata?: string[]
}

/**
 * `--max-activations 3|unlimited`, `--expiration-date ISO|never`, `--customer ID|none`,
 * `--entitlement CODE…` and `--metadata key=value…`, as the body's fields.
 */
function terms(options: TermsOptions) {
  return defined({
    maxActivations:
      options.maxActivations === undefined ? undefined : orNull(options.maxActivations, 'unlimited', integer),
    expirationDate:
      options.expirationDate === undefined ? undefined : orNull(options.expirationDate, 'never', dateTime),
    heartbeatTtl:
      options.heartbeatTtl === undefined ? undefined : orNull(options.heartbeatTtl, 'none', integer),
    maxUses: options.maxUses === undefined ? undefined : orNull(options.maxUses, 'unlimited', integer),
    customerId: options.customer === undefined ? undefined : orNull(options.customer, 'none', (text) => text),
    entitlements: entitlementFlags(options),
    metadata: metadataFlags(options.metadata),
  })
}

/** `--heartbeat-ttl` and `--max-uses`, on create and update. */
function withSeatAndUsageOptions(command: Command): Command {
  return command
    .option(
      '--heartbeat-ttl <seconds>',
      'floating seats: a machine keeps its seat this long after its last heartbeat (60 to 604800), or "none"',
    )
    .option('--max-uses <n>', 'metered usage: uses allowed until reset, or "unlimited" (the default)')
}

/** `keyturn licenses …`: licenses, their validation and tokens, bulk import and export. */
export function registerLicenses(program: Command, io: Io): void {
  const licenses = program
    .command('licenses')
    .description('Licenses: create, list, validate, tokens, import, export')
    .addHelpText('after', '\nExample:\n  keyturn licenses list --product prd_3kTMd9qA8xYb2VnLr5sPwZ --all')

  withSeatAndUsageOptions(
    apiCommand(licenses, 'create', 'Create a license (the server generates its key)', [
      'keyturn licenses create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --max-activations 3 --expiration-date 2031-01-01',
      'keyturn licenses create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --max-activations 5 --heartbeat-ttl 900 --max-uses 1000',
    ]),
  )
    .requiredOption('--product <id>', 'the product')
    .option('--max-activations <n>', 'machines it may be activated on, or "unlimited" (default 1)')
    .option(
      '--expiration-date <date>',
      'when it expires, in the future: ISO 8601 (2031-01-01T12:00:00Z) or a plain date (2031-01-01 = the end of that day, 23:59:59.999 UTC), or "never" (the default)',
    )
    .option('--policy <id>', 'a policy of the product: its seats and expiry apply unless given here')
    .option(
      '--key <key>',
      'a key of your own (8 to 256 printable ASCII characters) instead of a generated one',
    )
    .option('--customer <id>', 'the customer who owns it')
    .option(
      '--entitlement <code>',
      "an entitlement code of its own, beside its policy's (repeatable)",
      collect,
    )
    .option(
      '--metadata <key=value>',
      'a metadata key, e.g. stripeSubscriptionId=sub_123 (repeatable)',
      collect,
    )
    .action(
      async (options: ApiOptions & TermsOptions & { product: string; policy?: string; key?: string }) => {
        const body = checked(
          CreateLicenseBodySchema,
          {
            productId: options.product,
            ...defined({ policyId: options.policy, key: options.key }),
            ...terms(options),
          },
          { ...fieldFlags, key: '--key' },
          nullWords,
        )
        const license = await clientFor(io, options).createLicense(body)
        printLicense(io, options, license, `Created license ${license.id} with key ${license.key}.`)
      },
    )

  withListOptions(
    apiCommand(licenses, 'list', 'List licenses', [
      'keyturn licenses list --product prd_3kTMd9qA8xYb2VnLr5sPwZ --filter status:eq:active --sort expirationDate:asc',
      'keyturn licenses list --all --json > licenses.json',
    ]).option('--product <id>', 'only this product'),
  ).action(async (options: ApiOptions & ListOptions & { product?: string }) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListLicensesQuerySchema,
      extra: { productId: options.product },
      page: (query) => client.listLicenses(query),
      iterate: (query) => client.iterateLicenses(query),
      noun: 'licenses',
      headers: ['id', 'key', 'status', 'max', 'used', 'expires', 'product'],
      row: (license: LicenseResource) => [
        license.id,
        license.key,
        license.status,
        show(license.maxActivations, 'unlimited'),
        license.activationCount,
        show(license.expirationDate, 'never'),
        license.productId,
      ],
    })
  })

  apiCommand(licenses, 'get <id>', 'Show a license', [
    'keyturn licenses get lic_7fQx2mNc4RtYp9LkWv3bHs',
  ]).action(async (id: LicenseId, options: ApiOptions) => {
    const license = await clientFor(io, options).getLicense(id)
    if (options.json === true) {
      printJson(io, license)
      return
    }
    printFields(io, licenseFields(license))
  })

  withSeatAndUsageOptions(
    apiCommand(
      licenses,
      'update <id>',
      "Change a license's terms (activations, expiry, heartbeat TTL, uses) or move it to another policy",
      [
        'keyturn licenses update lic_7fQx2mNc4RtYp9LkWv3bHs --max-activations 5 --expiration-date never',
        'keyturn licenses update lic_7fQx2mNc4RtYp9LkWv3bHs --policy pol_8sKd2LqW5nXv3BzTm7YcRf --expiry reset',
      ],
    ),
  )
    .option('--max-activations <n>', 'machines it may be activated on, or "unlimited"')
    .option(
      '--expiration-date <date>',
      'when it expires, in the future: ISO 8601 (2031-01-01T12:00:00Z) or a plain date (2031-01-01 = the end of that day, 23:59:59.999 UTC), or "never"',
    )
    .option('--customer <id>', 'the customer who owns it, or "none" to detach')
    .option('--entitlement <code>', 'its own entitlement codes (repeatable; replaces them)', collect)
    .option('--no-entitlements', "remove its own entitlement codes (its policy's stay)")
    .option('--metadata <key=value>', 'a metadata key to set, or key= to remove (repeatable)', collect)
    .option(
      '--policy <id>',
      'move it to this policy of its product, or "none": its activations, heartbeat TTL and uses become the policy\'s unless given here',
    )
    .option(
      '--expiry <keep|reset>',
      'with --policy: keep the expiration date (default) or reset it from the new policy',
    )
    .action(
      async (id: LicenseId, options: ApiOptions & TermsOptions & { policy?: string; expiry?: string }) => {
        const move = defined({
          policyId: options.policy === undefined ? undefined : orNull(options.policy, 'none', (text) => text),
          expiry: options.expiry,
        })
        const body = checked(UpdateLicenseBodySchema, { ...terms(options), ...move }, fieldFlags, nullWords)
        const license = await clientFor(io, options).updateLicense(id, body)
        printLicense(io, options, license, `Updated license ${license.id}.`)
      },
    )

  apiCommand(
    licenses,
    'renew <id>',
    "Extend a license: max(now, its expiration date) + the duration (default: its policy's)",
    ['keyturn licenses renew lic_7fQx2mNc4RtYp9LkWv3bHs --duration 31536000 --idempotency-key inv_2031_0042'],
  )
    .option('--duration <seconds>', 'seconds to add (at least 3600); required without a policy duration')
    .option('--idempotency-key <key>', 'e.g. the invoice id: a retry with the same key renews only once')
    .action(async (id: LicenseId, options: ApiOptions & { duration?: string; idempotencyKey?: string }) => {
      const body = checked(
        RenewLicenseBodySchema,
        defined({ duration: options.duration === undefined ? undefined : integer(options.duration) }),
        fieldFlags,
      )
      const license = await clientFor(io, options).renewLicense(
        id,
        body,
        defined({ idempotencyKey: options.idempotencyKey }),
      )
      printLicense(
        io,
        options,
        license,
        `Renewed license ${license.id}: it expires ${show(license.expirationDate, 'never')}.`,
      )
    })

  apiCommand(licenses, 'revoke <id>', 'Revoke a license: it validates as invalid (reason revoked)', [
    'keyturn licenses revoke lic_7fQx2mNc4RtYp9LkWv3bHs',
  ]).action(async (id: LicenseId, options: ApiOptions) => {
    const license = await clientFor(io, options).revokeLicense(id)
    printLicense(io, options, license, `Revoked license ${license.id}.`)
  })

  apiCommand(licenses, 'reinstate <id>', 'Reinstate a revoked license', [
    'keyturn licenses reinstate lic_7fQx2mNc4RtYp9LkWv3bHs',
  ]).action(async (id: LicenseId, options: ApiOptions) => {
    const license = await clientFor(io, options).reinstateLicense(id)
    printLicense(io, options, license, `Reinstated license ${license.id}: it is ${license.status}.`)
  })

  apiCommand(
    licenses,
    'validate <key>',
    'Check a license key online, as an application would; exits 1 when the license is not valid',
    [
      'keyturn licenses validate 7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A --product prd_3kTMd9qA8xYb2VnLr5sPwZ',
      'keyturn licenses validate "$KEY" --product "$PRODUCT" --fingerprint 4f9c2b7e1a6d3f08 --json',
    ],
  )
    .requiredOption('--product <id>', 'the product the key must belong to')
    .option('--fingerprint <fingerprint>', 'valid only if this machine is activated')
    .option('--entitlement <code>', 'valid only if the license has this entitlement (repeatable)', collect)
    .action(
      async (
        key: string,
        options: ApiOptions & { product: string; fingerprint?: string; entitlement?: string[] },
      ) => {
        const body = checked(
          ValidateLicenseBodySchema,
          defined({
            key,
            productId: options.product,
            fingerprint: options.fingerprint,
            entitlements: options.entitlement,
          }),
          fieldFlags,
        )
        const result = await clientFor(io, options).validateLicense(body)
        if (options.json === true) {
          printJson(io, result)
        } else {
          io.print(result.isValid ? 'valid' : `not valid: ${result.reason}`)
          io.print('')
          printFields(io, licenseFields(result.license))
        }
        if (!result.isValid) {
          throw new CommandFailed()
        }
      },
    )

  apiCommand(
    licenses,
    'token <id>',
    'Issue a signed license token for offline checks (prints the token; --json for the payload too)',
    [
      'keyturn licenses token lic_7fQx2mNc4RtYp9LkWv3bHs --ttl 604800 --custom-payload \'{"plan":"pro"}\'',
      'TOKEN=$(keyturn licenses token lic_7fQx2mNc4RtYp9LkWv3bHs)',
    ],
  )
    .option('--ttl <seconds>', 'token lifetime, 3600 to 31536000 (default 30 days; never past the license)')
    .option('--custom-payload <json>', 'a JSON object the token carries as customFields')
    .option('--fingerprint <fingerprint>', 'bind the token to this activated machine')
    .action(
      async (
        id: LicenseId,
        options: ApiOptions & { ttl?: string; customPayload?: string; fingerprint?: string },
      ) => {
        const body = checked(
          CreateLicenseTokenBodySchema,
          defined({
            ttl: options.ttl === undefined ? undefined : integer(options.ttl),
            customPayload:
              options.customPayload === undefined
                ? undefined
                : json(options.customPayload, '--custom-payload'),
            fingerprint: options.fingerprint,
          }),
          fieldFlags,
        )
        const token = await clientFor(io, options).createLicenseToken(id, body)
        if (options.json === true) {
          printJson(io, token)
        } else {
          io.print(token.token)
        }
      },
    )

  registerLicenseFileCommand(licenses, io)

  apiCommand(licenses, 'usage <id>', 'Count uses of a metered license; refused (exit 1) past maxUses', [
    'keyturn licenses usage lic_7fQx2mNc4RtYp9LkWv3bHs --increment 5',
  ])
    .option('--increment <n>', 'uses to add, 1 to 1000000', '1')
    .action(async (id: LicenseId, options: ApiOptions & { increment: string }) => {
      const body = checked(IncrementUsageBodySchema, { increment: integer(options.increment) }, fieldFlags)
      const license = await clientFor(io, options).incrementLicenseUsage(id, body)
      printLicense(io, options, license, `License ${license.id} has used ${usesOf(license)}.`)
    })

  apiCommand(licenses, 'reset-usage <id>', 'Reset the uses of a metered license to 0', [
    'keyturn licenses reset-usage lic_7fQx2mNc4RtYp9LkWv3bHs',
  ]).action(async (id: LicenseId, options: ApiOptions) => {
    const license = await clientFor(io, options).resetLicenseUsage(id)
    printLicense(io, options, license, `Reset the uses of license ${license.id}: ${usesOf(license)}.`)
  })

  apiCommand(
    licenses,
    'import <file>',
    'Create licenses in bulk from CSV or JSON Lines; safe to run again after an interruption',
    [
      'keyturn licenses import licenses.csv',
      'keyturn licenses import old-product.jsonl --product prd_3kTMd9qA8xYb2VnLr5sPwZ',
    ],
  )
    .option('--product <id>', 'create every row for this product (instead of its productId column)')
    .option('--format <format>', 'csv or jsonl (default: from the file name)')
    .option('--concurrency <n>', 'requests in flight, 1 to 64', '8')
    .option(
      '--policy-map <old=new,…>',
      'policies of the file replaced by policies of the target product (new: a pol_ id, or none)',
    )
    .option('--keep-keys', "each row's key column becomes its license's key (moving from another system)")
    .addHelpText(
      'after',
      `
Columns (CSV header, or JSON Lines fields): productId, maxActivations, expirationDate, heartbeatTtl,
maxUses, customerEmail, customerId, policyId, entitlements, metadata, status, externalId.
  maxActivations  an integer, or null for unlimited; empty: the server's default (1), or the policy's
  expirationDate  ISO 8601, in the future; null: never expires; empty: never, or the policy's
  heartbeatTtl    floating seats: seconds a seat lives without a heartbeat; null or empty: fixed seats
  maxUses         metered: uses allowed until a reset; null or empty: unmetered
  customerEmail   the customer's email: found, or created when there is none (wins over customerId)
  policyId        a policy of the product, used as the license's template; a policy of another
                  product (an export of another product) is refused per row unless --policy-map
                  maps it (--policy-map pol_old=pol_new,pol_other=none)
  entitlements    entitlement codes of the product (CSV: separated by spaces; JSON: an array)
  metadata        a JSON object; in CSV also metadata.<key> columns, one key each (as text)
  status          revoked: the new license is revoked after it is created; active, expired or
                  empty: left as created
  externalId      optional: your id for the row; without it a row is known by the file and line
The other columns keyturn licenses export writes (id, key, uses, …) are accepted and ignored: keys,
uses and activations are not carried over, the server makes new keys, unless --keep-keys: then each
row's key is kept (keys are unique across the server: a taken one fails its row, license_key_taken),
its uses are counted again, and the machines of an activations column (a JSON array of
{"fingerprint", "name"?, "metadata"?}) are activated before any revocation. The summary says what was
created, what an earlier run had already created, what was revoked and which policies were mapped.

Each row is sent with an Idempotency-Key, so running the same import again (within 24 hours)
creates only what is missing. Rows that fail are listed on stderr with their line; the rest go in.`,
    )
    .action(
      async (
        file: string,
        options: ApiOptions & { product?: string; format?: string; concurrency: string; policyMap?: string },
      ) => {
        await importLicenses(io, file, options)
      },
    )

  apiCommand(licenses, 'export', 'Write every license, page by page, as CSV or JSON Lines', [
    'keyturn licenses export --product prd_3kTMd9qA8xYb2VnLr5sPwZ --format csv --out licenses.csv',
    'keyturn licenses export --format jsonl | gzip > licenses.jsonl.gz',
  ])
    .option('--product <id>', 'only this product')
    .option('--format <format>', 'csv or jsonl', 'csv')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (options: ApiOptions & { product?: string; format: string; out?: string }) => {
      await exportLicenses(io, options)
    })
}

function licenseFields(license: LicenseResource) {
  return [
    ['id', license.id],
    ['key', license.key],
    ['status', license.status],
    ['product', license.productId],
    ['max activations', show(license.maxActivations, 'unlimited')],
    ['activations', license.activationCount],
    ['heartbeat TTL', license.heartbeatTtl === null ? 'none' : `${license.heartbeatTtl} s`],
    ['uses', usesOf(license)],
    ['expires', show(license.expirationDate, 'never')],
    ['customer', show(license.customerId, 'none')],
    ['policy', show(license.policyId, 'none')],
    ['entitlements', license.entitlements.join(' ')],
    ['metadata', JSON.stringify(license.metadata)],
    ['created', license.createdAt],
    ['updated', license.updatedAt],
  ] as const
}

function usesOf(license: LicenseResource): string {
  return license.maxUses === null ? `${license.uses} (unmetered)` : `${license.uses} of ${license.maxUses}`
}

function printLicense(io: Io, options: ApiOptions, license: LicenseResource, confirmation: string): void {
  if (options.json === true) {
    printJson(io, license)
  } else {
    io.print(confirmation)
  }
}
