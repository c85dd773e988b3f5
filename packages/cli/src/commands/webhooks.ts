import type { WebhookDeliveryResource, WebhookEndpointResource } from '@keyturn/client'
import {
  CreateWebhookEndpointBodySchema,
  ListWebhookDeliveriesQuerySchema,
  ListWebhookEndpointsQuerySchema,
  UpdateWebhookEndpointBodySchema,
  type WebhookDeliveryId,
  type WebhookEndpointId,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, defined } from '../checks.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printFields, printJson } from '../output.js'

interface EndpointFlags {
  readonly endpointUrl?: string
  readonly events?: string
  readonly description?: string
  readonly product?: string
  readonly enable?: boolean
  readonly disable?: boolean
}

const endpointFlags = {
  url: '--endpoint-url',
  eventTypes: '--events',
  description: '--description',
  productId: '--product',
  enabled: '--enable/--disable',
}

function enabledFrom(flags: EndpointFlags): boolean | undefined {
  return flags.enable === true ? true : flags.disable === true ? false : undefined
}

function printEndpoint(io: Io, endpoint: WebhookEndpointResource): void {
  printFields(io, [
    ['id', endpoint.id],
    ['url', endpoint.url],
    ['events', endpoint.eventTypes.join(',')],
    ['product', endpoint.productId],
    ['enabled', endpoint.enabled],
    ['description', endpoint.description],
    ['created', endpoint.createdAt],
    ['updated', endpoint.updatedAt],
  ])
}

/** `keyturn webhooks …`: webhook endpoints and their deliveries. */
export function registerWebhooks(program: Command, io: Io): void {
  const webhooks = program
    .command('webhooks')
    .description('Webhook endpoints and their deliveries (admin or product API key)')
    .addHelpText(
      'after',
      '\nExample:\n  keyturn webhooks create --endpoint-url https://billing.example.com/keyturn --events "license.*"',
    )

  apiCommand(webhooks, 'create', 'Create an endpoint; its signing secret is shown only in this answer', [
    'keyturn webhooks create --endpoint-url https://billing.example.com/keyturn --events "license.*,activation.created"',
  ])
    .requiredOption('--endpoint-url <url>', 'where deliveries are POSTed (https://)')
    .requiredOption('--events <patterns>', 'event types joined by ",": exact, <resource>.*, or *')
    .option('--description <text>', 'what the endpoint is for')
    .option('--product <id>', "only this product's events (a product key's own product by default)")
    .option('--disable', 'create it disabled')
    .action(async (options: ApiOptions & EndpointFlags) => {
      const body = checked(
        CreateWebhookEndpointBodySchema,
        defined({
          url: options.endpointUrl,
          eventTypes: options.events?.split(','),
          description: options.description,
          productId: options.product,
          enabled: enabledFrom(options),
        }),
        endpointFlags,
      )
      const created = await clientFor(io, options).createWebhookEndpoint(body)
      if (options.json === true) {
        printJson(io, created)
        return
      }
      io.print(`Created webhook endpoint ${created.id}. Its signing secret, shown only this once:`)
      io.print('')
      io.print(`  ${created.secret}`)
    })

  withListOptions(apiCommand(webhooks, 'list', 'List webhook endpoints', ['keyturn webhooks list'])).action(
    async (options: ApiOptions & ListOptions) => {
      const client = clientFor(io, options)
      await printList(io, {
        options,
        schema: ListWebhookEndpointsQuerySchema,
        page: (query) => client.listWebhookEndpoints(query),
        iterate: async function* (query) {
          yield* (await client.listWebhookEndpoints({ ...query, limit: 100 })).data
        },
        noun: 'webhook endpoints',
        headers: ['id', 'url', 'events', 'product', 'enabled', 'created'],
        row: (endpoint: WebhookEndpointResource) => [
          endpoint.id,
          endpoint.url,
          endpoint.eventTypes.join(','),
          endpoint.productId,
          endpoint.enabled,
          endpoint.createdAt,
        ],
      })
    },
  )

  apiCommand(webhooks, 'get <id>', 'Show a webhook endpoint', [
    'keyturn webhooks get whk_8sLq2NcVx5RtPm3KbY7wHd',
  ]).action(async (id: WebhookEndpointId, options: ApiOptions) => {
    const endpoint = await clientFor(io, options).getWebhookEndpoint(id)
    if (options.json === true) {
      printJson(io, endpoint)
      return
    }
    printEndpoint(io, endpoint)
  })

  apiCommand(webhooks, 'update <id>', 'Change an endpoint', [
    'keyturn webhooks update whk_8sLq2NcVx5RtPm3KbY7wHd --enable',
  ])
    .option('--endpoint-url <url>', 'a new URL for deliveries')
    .option('--events <patterns>', 'new event types joined by ","')
    .option('--description <text>', 'a new description')
    .option('--enable', 'enable it (pending deliveries go out)')
    .option('--disable', 'disable it')
    .action(async (id: WebhookEndpointId, options: ApiOptions & EndpointFlags) => {
      const body = checked(
        UpdateWebhookEndpointBodySchema,
        defined({
          url: options.endpointUrl,
          eventTypes: options.events?.split(','),
          description: options.description,
          enabled: enabledFrom(options),
        }),
        endpointFlags,
      )
      const endpoint = await clientFor(io, options).updateWebhookEndpoint(id, body)
      if (options.json === true) {
        printJson(io, endpoint)
        return
      }
      printEndpoint(io, endpoint)
    })

  apiCommand(webhooks, 'delete <id>', 'Delete an endpoint and its delivery log', [
    'keyturn webhooks delete whk_8sLq2NcVx5RtPm3KbY7wHd',
  ]).action(async (id: WebhookEndpointId, options: ApiOptions) => {
    await clientFor(io, options).deleteWebhookEndpoint(id)
    if (options.json !== true) {
      io.print(`Deleted webhook endpoint ${id}.`)
    }
  })

  apiCommand(webhooks, 'rotate-secret <id>', 'Give an endpoint a new signing secret (shown only now)', [
    'keyturn webhooks rotate-secret whk_8sLq2NcVx5RtPm3KbY7wHd',
  ]).action(async (id: WebhookEndpointId, options: ApiOptions) => {
    const rotated = await clientFor(io, options).rotateWebhookEndpointSecret(id)
    if (options.json === true) {
      printJson(io, rotated)
      return
    }
    io.print(`New signing secret of ${rotated.id}, shown only this once (the old one no longer signs):`)
    io.print('')
    io.print(`  ${rotated.secret}`)
  })

  apiCommand(webhooks, 'test <id>', 'Send a webhook_endpoint.test event to this endpoint', [
    'keyturn webhooks test whk_8sLq2NcVx5RtPm3KbY7wHd',
  ]).action(async (id: WebhookEndpointId, options: ApiOptions) => {
    const endpoint = await clientFor(io, options).testWebhookEndpoint(id)
    if (options.json === true) {
      printJson(io, endpoint)
      return
    }
    io.print(`Sent a test event to ${endpoint.url}; see: keyturn webhooks deliveries ${endpoint.id}`)
  })

  withListOptions(
    apiCommand(webhooks, 'deliveries <id>', "List an endpoint's deliveries, newest first", [
      'keyturn webhooks deliveries whk_8sLq2NcVx5RtPm3KbY7wHd --filter status:eq:failed',
    ]),
  ).action(async (id: WebhookEndpointId, options: ApiOptions & ListOptions) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListWebhookDeliveriesQuerySchema,
      page: (query) => client.listWebhookDeliveries(id, query),
      iterate: async function* (query) {
        yield* (await client.listWebhookDeliveries(id, { ...query, limit: 100 })).data
      },
      noun: 'deliveries',
      headers: ['id', 'event', 'type', 'status', 'attempts', 'last status', 'next attempt', 'last error'],
      row: (delivery: WebhookDeliveryResource) => [
        delivery.id,
        delivery.eventId,
        delivery.eventType,
        delivery.status,
        delivery.attempts,
        delivery.lastResponseStatus,
        delivery.nextAttemptAt,
        delivery.lastError,
      ],
    })
  })

  apiCommand(webhooks, 'retry <delivery-id>', 'Send a delivery again now', [
    'keyturn webhooks retry dlv_3Nc8VqLx2TmRp7KbW5sYhD',
  ]).action(async (id: WebhookDeliveryId, options: ApiOptions) => {
    const delivery = await clientFor(io, options).retryWebhookDelivery(id)
    if (options.json === true) {
      printJson(io, delivery)
      return
    }
    io.print(`Delivery ${delivery.id} is due again; a worker sends it within a second or so.`)
  })
}
