import type { IntegrationResource } from '@keyturn/client'
import { CreateIntegrationBodySchema, UpdateIntegrationBodySchema } from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, defined } from '../checks.js'
import { UsageError } from '../errors.js'
import type { Io } from '../io.js'
import { printFields, printJson, printTable } from '../output.js'

/** The signing secret comes from the environment, never from a flag (shell history, process lists). */
const secretVariable = 'KEYTURN_SIGNING_SECRET'

interface IntegrationFlags {
  readonly provider?: string
  readonly map?: string[]
  readonly onRefund?: string
  readonly graceDays?: string
  readonly description?: string
  readonly newSecret?: boolean
}

const integrationFlags = {
  provider: '--provider',
  signingSecret: secretVariable,
  mappings: '--map',
  onRefund: '--on-refund',
  paymentGraceDays: '--grace-days',
  description: '--description',
}

/** `--map price_123=prd_…:pol_…`, repeated. */
function mappingsFrom(values: readonly string[] | undefined) {
  return values?.map((value) => {
    const [providerItemId, target = ''] = value.split('=', 2)
    const [productId, policyId] = target.split(':', 2)
    return { providerItemId, productId, policyId }
  })
}

function secretFromEnvironment(io: Io): string {
  const secret = io.env[secretVariable]
  if (secret === undefined || secret === '') {
    throw new UsageError(`set ${secretVariable} to the provider's webhook signing secret`)
  }
  return secret
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

function printIntegration(io: Io, integration: IntegrationResource): void {
  printFields(io, [
    ['id', integration.id],
    ['provider', integration.provider],
    ['webhook path', integration.webhookPath],
    [
      'mappings',
      integration.mappings.map((m) => `${m.providerItemId}=${m.productId}:${m.policyId}`).join(' '),
    ],
    ['on refund', integration.onRefund],
    ['grace days', integration.paymentGraceDays],
    ['description', integration.description],
    ['created', integration.createdAt],
    ['updated', integration.updatedAt],
  ])
}

/** `keyturn integrations …`: Stripe, Paddle and Lemon Squeezy integrations (admin key). */
export function registerIntegrations(program: Command, io: Io): void {
  const integrations = program
    .command('integrations')
    .description('Payment-provider integrations: Stripe, Paddle, Lemon Squeezy (admin API key)')

  apiCommand(
    integrations,
    'create',
    `Create an integration; the provider's signing secret is read from ${secretVariable}`,
    [`${secretVariable}=whsec_… keyturn integrations create --provider stripe --map price_123=prd_…:pol_…`],
  )
    .requiredOption('--provider <name>', 'stripe, paddle or lemonsqueezy')
    .option(
      '--map <item=product:policy>',
      'a provider item sold as a policy of a product (repeatable)',
      collect,
    )
    .option('--on-refund <rule>', 'revoke (default) or none')
    .option('--grace-days <days>', 'days a license keeps working after a failed payment (default 7)')
    .option('--description <text>', 'what the integration is for')
    .action(async (options: ApiOptions & IntegrationFlags) => {
      secretFromEnvironment(io)
      const body = checked(
        CreateIntegrationBodySchema,
        defined({
          provider: options.provider,
          signingSecret: io.env[secretVariable],
          mappings: mappingsFrom(options.map),
          onRefund: options.onRefund,
          paymentGraceDays: options.graceDays === undefined ? undefined : Number(options.graceDays),
          description: options.description,
        }),
        integrationFlags,
      )
      const created = await clientFor(io, options).createIntegration(body)
      if (options.json === true) {
        printJson(io, created)
        return
      }
      printIntegration(io, created)
    })

  apiCommand(integrations, 'list', 'List integrations', ['keyturn integrations list']).action(
    async (options: ApiOptions) => {
      const list = await clientFor(io, options).listIntegrations()
      if (options.json === true) {
        printJson(io, list)
        return
      }
      printTable(
        io,
        ['id', 'provider', 'mappings', 'on refund', 'grace days', 'created'],
        list.data.map((i) => [
          i.id,
          i.provider,
          i.mappings.length,
          i.onRefund,
          i.paymentGraceDays,
          i.createdAt,
        ]),
      )
    },
  )

  apiCommand(integrations, 'get <id>', 'Show an integration (never its secret)', [
    'keyturn integrations get int_8sLq2NcVx5RtPm3KbY7wHe',
  ]).action(async (id: string, options: ApiOptions) => {
    const integration = await clientFor(io, options).getIntegration(id)
    if (options.json === true) {
      printJson(io, integration)
      return
    }
    printIntegration(io, integration)
  })

  apiCommand(integrations, 'update <id>', 'Change an integration; --map replaces every mapping', [
    'keyturn integrations update int_8sLq2NcVx5RtPm3KbY7wHe --grace-days 3',
  ])
    .option('--map <item=product:policy>', 'the new mappings (repeatable)', collect)
    .option('--on-refund <rule>', 'revoke or none')
    .option('--grace-days <days>', 'days a license keeps working after a failed payment')
    .option('--description <text>', 'what the integration is for')
    .option('--new-secret', `replace the signing secret with ${secretVariable}`)
    .action(async (id: string, options: ApiOptions & IntegrationFlags) => {
      const body = checked(
        UpdateIntegrationBodySchema,
        defined({
          mappings: mappingsFrom(options.map),
          onRefund: options.onRefund,
          paymentGraceDays: options.graceDays === undefined ? undefined : Number(options.graceDays),
          description: options.description,
          signingSecret: options.newSecret === true ? secretFromEnvironment(io) : undefined,
        }),
        integrationFlags,
      )
      const updated = await clientFor(io, options).updateIntegration(id, body)
      if (options.json === true) {
        printJson(io, updated)
        return
      }
      printIntegration(io, updated)
    })

  apiCommand(integrations, 'delete <id>', 'Delete an integration, its links and received events', [
    'keyturn integrations delete int_8sLq2NcVx5RtPm3KbY7wHe',
  ]).action(async (id: string, options: ApiOptions) => {
    await clientFor(io, options).deleteIntegration(id)
    if (options.json !== true) {
      io.print(`Deleted integration ${id}.`)
    }
  })

  apiCommand(integrations, 'events <id>', 'The latest provider events received, with what each did', [
    'keyturn integrations events int_8sLq2NcVx5RtPm3KbY7wHe',
  ]).action(async (id: string, options: ApiOptions) => {
    const list = await clientFor(io, options).listIntegrationEvents(id)
    if (options.json === true) {
      printJson(io, list)
      return
    }
    printTable(
      io,
      ['received', 'type', 'status', 'outcome', 'key'],
      list.data.map((e) => [e.receivedAt, e.eventType, e.status, e.outcome, e.dedupeKey]),
    )
  })
}
