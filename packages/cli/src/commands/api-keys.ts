import type { ApiKeyResource } from '@keyturn/client'
import {
  type ApiKeyId,
  ApiKeyRoleSchema,
  CreateApiKeyBodySchema,
  ListApiKeysQuerySchema,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, defined } from '../checks.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printFields, printJson } from '../output.js'

const roles = ApiKeyRoleSchema.enum.join('|')

/** `keyturn api-keys …`: API keys (admin keys only). */
export function registerApiKeys(program: Command, io: Io): void {
  const apiKeys = program
    .command('api-keys')
    .description('API keys (admin API key)')
    .addHelpText('after', '\nExample:\n  keyturn api-keys list')

  apiCommand(apiKeys, 'create', 'Create an API key; its secret is shown only in this answer', [
    'keyturn api-keys create --name "Photo Editor back end" --role product --product prd_3kTMd9qA8xYb2VnLr5sPwZ',
  ])
    .requiredOption('--name <name>', 'what the key is for')
    .requiredOption('--role <role>', `${roles}`)
    .option('--product <id>', 'the product a product-scoped key may act on')
    .action(async (options: ApiOptions & { name: string; role: string; product?: string }) => {
      const body = checked(
        CreateApiKeyBodySchema,
        defined({ name: options.name, role: options.role, productId: options.product }),
        { name: '--name', role: '--role', productId: '--product' },
      )
      const key = await clientFor(io, options).createApiKey(body)
      if (options.json === true) {
        printJson(io, key)
        return
      }
      io.print(`Created API key ${key.id} (${describeRole(key)}). Its secret, shown only this once:`)
      io.print('')
      io.print(`  ${key.secret}`)
    })

  withListOptions(
    apiCommand(apiKeys, 'list', 'List API keys (never their secrets)', [
      'keyturn api-keys list --filter role:eq:product',
    ]),
  ).action(async (options: ApiOptions & ListOptions) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListApiKeysQuerySchema,
      page: (query) => client.listApiKeys(query),
      iterate: (query) => client.iterateApiKeys(query),
      noun: 'API keys',
      headers: ['id', 'name', 'role', 'product', 'prefix', 'created'],
      row: (key: ApiKeyResource) => [key.id, key.name, key.role, key.productId, key.prefix, key.createdAt],
    })
  })

  apiCommand(apiKeys, 'get <id>', 'Show an API key', [
    'keyturn api-keys get key_5bVn8cXz2LkJh4GfDs6aQw',
  ]).action(async (id: ApiKeyId, options: ApiOptions) => {
    const key = await clientFor(io, options).getApiKey(id)
    if (options.json === true) {
      printJson(io, key)
      return
    }
    printFields(io, [
      ['id', key.id],
      ['name', key.name],
      ['role', key.role],
      ['product', key.productId],
      ['prefix', key.prefix],
      ['created', key.createdAt],
    ])
  })

  apiCommand(apiKeys, 'delete <id>', 'Delete an API key: requests with it are refused at once', [
    'keyturn api-keys delete key_5bVn8cXz2LkJh4GfDs6aQw',
  ]).action(async (id: ApiKeyId, options: ApiOptions) => {
    await clientFor(io, options).deleteApiKey(id)
    // The API answers 204 without a body: --json prints nothing, the exit code says it worked.
    if (options.json !== true) {
      io.print(`Deleted API key ${id}.`)
    }
  })
}

function describeRole(key: ApiKeyResource): string {
  return key.productId === null ? key.role : `${key.role}, ${key.productId}`
}
