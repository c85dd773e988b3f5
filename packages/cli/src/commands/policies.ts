import type { PolicyResource } from '@keyturn/client'
import {
  CreatePolicyBodySchema,
  ListPoliciesQuerySchema,
  type PolicyId,
  UpdatePolicyBodySchema,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, collect, defined, entitlementFlags, integer, metadataFlags, orNull } from '../checks.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printJson, show } from '../output.js'

const fieldFlags = {
  productId: '--product',
  name: '--name',
  maxActivations: '--max-activations',
  duration: '--duration',
  expirationBasis: '--expiration-basis',
  entitlements: '--entitlement',
  metadata: '--metadata',
  licenseFileTtl: '--license-file-ttl',
  tokenTtlMax: '--token-ttl-max',
  licenseFileMetadata: '--license-file-metadata',
  checkInInterval: '--check-in-interval',
  gracePeriod: '--grace-period',
  seatsPerQuantity: '--seats-per-quantity',
}
const nullWords = {
  maxActivations: 'unlimited',
  duration: 'never',
  licenseFileTtl: 'never',
  tokenTtlMax: 'default',
  checkInInterval: 'none',
  gracePeriod: 'none',
}

interface PolicyOptions {
  readonly name?: string
  readonly maxActivations?: string
  readonly duration?: string
  readonly expirationBasis?: string
  readonly entitlement?: string[]
  /** false with --no-entitlements (update). */
  readonly entitlements?: boolean
  readonly metadata?: string[]
  readonly licenseFileTtl?: string
  readonly tokenTtlMax?: string
  readonly licenseFileMetadata?: string
  readonly checkInInterval?: string
  readonly gracePeriod?: string
  readonly seatsPerQuantity?: string
}

/** A `true|false` flag: the boolean, or the text as given (the schema check names the flag). */
function booleanFlag(value: string | undefined): boolean | string | undefined {
  return value === undefined ? undefined : value === 'true' ? true : value === 'false' ? false : value
}

function policyFields(options: PolicyOptions) {
  return defined({
    name: options.name,
    maxActivations:
      options.maxActivations === undefined ? undefined : orNull(options.maxActivations, 'unlimited', integer),
    duration: options.duration === undefined ? undefined : orNull(options.duration, 'never', integer),
    expirationBasis: options.expirationBasis,
    entitlements: entitlementFlags(options),
    metadata: metadataFlags(options.metadata),
    licenseFileTtl:
      options.licenseFileTtl === undefined ? undefined : orNull(options.licenseFileTtl, 'never', integer),
    tokenTtlMax:
      options.tokenTtlMax === undefined ? undefined : orNull(options.tokenTtlMax, 'default', integer),
    licenseFileMetadata:
      options.licenseFileMetadata === undefined
        ? undefined
        : options.licenseFileMetadata === 'true'
          ? true
          : options.licenseFileMetadata === 'false'
            ? false
            : options.licenseFileMetadata,
    checkInInterval:
      options.checkInInterval === undefined ? undefined : orNull(options.checkInInterval, 'none', integer),
    gracePeriod: options.gracePeriod === undefined ? undefined : orNull(options.gracePeriod, 'none', integer),
    seatsPerQuantity: booleanFlag(options.seatsPerQuantity),
  })
}

/** `keyturn policies …`: plans that licenses are made from. */
export function registerPolicies(program: Command, io: Io): void {
  const policies = program
    .command('policies')
    .description('Policies: plans that licenses are made from (seats, duration, entitlements)')
    .addHelpText(
      'after',
      '\nExample:\n  keyturn policies create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --name "Pro yearly" --max-activations 3 --duration 31536000 --entitlement export-pdf',
    )

  const withPolicyOptions = (command: Command) =>
    command
      .option('--max-activations <n>', 'seats of its licenses, or "unlimited" (default 1)')
      .option('--duration <seconds>', 'how long its licenses last (at least 3600), or "never" (the default)')
      .option('--expiration-basis <basis>', 'creation (default) or firstActivation')
      .option('--entitlement <code>', 'an entitlement code (repeatable; replaces the set on update)', collect)
      .option('--metadata <key=value>', 'a metadata key (repeatable; key= removes one on update)', collect)
      .option(
        '--license-file-ttl <seconds>',
        'lifetime of license files for its licenses when not asked for (default a year), or "never"',
      )
      .option(
        '--token-ttl-max <seconds>',
        'the longest token ttl its licenses may ask for, or "default" (a year)',
      )
      .option('--license-file-metadata <true|false>', "whether license files carry the license's metadata")
      .option(
        '--check-in-interval <seconds>',
        'how long applications may go without validating online, or "none" (the default: no check-in)',
      )
      .option(
        '--grace-period <seconds>',
        'how long after a missed check-in applications keep working offline, or "none" (the application decides)',
      )
      .option(
        '--seats-per-quantity <true|false>',
        'whether a payment provider sale of quantity N gets N times --max-activations',
      )

  withPolicyOptions(
    apiCommand(policies, 'create', 'Create a policy', [
      'keyturn policies create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --name "Pro yearly" --max-activations 3 --duration 31536000 --entitlement export-pdf',
      'keyturn policies create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --name Trial --duration 1209600 --expiration-basis firstActivation',
    ])
      .requiredOption('--product <id>', 'the product')
      .requiredOption('--name <name>', 'the plan name'),
  ).action(async (options: ApiOptions & PolicyOptions & { product: string }) => {
    const body = checked(
      CreatePolicyBodySchema,
      { productId: options.product, ...policyFields(options) },
      fieldFlags,
      nullWords,
    )
    const policy = await clientFor(io, options).createPolicy(body)
    print(io, options, policy, `Created policy ${policy.id} (${policy.name}).`)
  })

  withListOptions(
    apiCommand(policies, 'list', 'List policies', [
      'keyturn policies list --product prd_3kTMd9qA8xYb2VnLr5sPwZ',
    ]).option('--product <id>', 'only this product'),
  ).action(async (options: ApiOptions & ListOptions & { product?: string }) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListPoliciesQuerySchema,
      extra: { productId: options.product },
      page: (query) => client.listPolicies(query),
      iterate: (query) => client.iteratePolicies(query),
      noun: 'policies',
      headers: ['id', 'name', 'max', 'duration', 'basis', 'entitlements'],
      row: (policy: PolicyResource) => [
        policy.id,
        policy.name,
        show(policy.maxActivations, 'unlimited'),
        show(policy.duration, 'never'),
        policy.expirationBasis,
        policy.entitlements.join(' '),
      ],
    })
  })

  apiCommand(policies, 'get <id>', 'Show a policy', [
    'keyturn policies get pol_8sKd2LqW5nXv3BzTm7YcRf',
  ]).action(async (id: PolicyId, options: ApiOptions) => {
    printJson(io, await clientFor(io, options).getPolicy(id))
  })

  withPolicyOptions(
    apiCommand(policies, 'update <id>', 'Change a policy (its licenses keep their seats and dates)', [
      'keyturn policies update pol_8sKd2LqW5nXv3BzTm7YcRf --entitlement export-pdf --entitlement cloud-sync',
      'keyturn policies update pol_8sKd2LqW5nXv3BzTm7YcRf --no-entitlements',
    ])
      .option('--name <name>', 'the new name')
      .option('--no-entitlements', 'remove every entitlement code from the policy'),
  ).action(async (id: PolicyId, options: ApiOptions & PolicyOptions) => {
    const body = checked(UpdatePolicyBodySchema, policyFields(options), fieldFlags, nullWords)
    const policy = await clientFor(io, options).updatePolicy(id, body)
    print(io, options, policy, `Updated policy ${policy.id}.`)
  })

  apiCommand(policies, 'delete <id>', 'Delete a policy no license was made from', [
    'keyturn policies delete pol_8sKd2LqW5nXv3BzTm7YcRf',
  ]).action(async (id: PolicyId, options: ApiOptions) => {
    await clientFor(io, options).deletePolicy(id)
    if (options.json !== true) {
      io.print(`Deleted policy ${id}.`)
    }
  })
}

function print(io: Io, options: ApiOptions, policy: PolicyResource, confirmation: string): void {
  if (options.json === true) {
    printJson(io, policy)
  } else {
    io.print(confirmation)
  }
}
