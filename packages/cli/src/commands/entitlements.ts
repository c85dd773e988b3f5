import type { EntitlementResource } from '@keyturn/client'
import {
  CreateEntitlementBodySchema,
  type EntitlementId,
  ListEntitlementsQuerySchema,
  UpdateEntitlementBodySchema,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, defined } from '../checks.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printJson } from '../output.js'

const fieldFlags = { productId: '--product', code: '--code', name: '--name' }

/** `keyturn entitlements …`: the features of a product that licenses unlock. */
export function registerEntitlements(program: Command, io: Io): void {
  const entitlements = program
    .command('entitlements')
    .description('Entitlements: the features of a product that licenses and policies unlock')
    .addHelpText(
      'after',
      '\nExample:\n  keyturn entitlements create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --code export-pdf --name "Export to PDF"',
    )

  apiCommand(entitlements, 'create', 'Create an entitlement (its code is unique per product)', [
    'keyturn entitlements create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --code export-pdf --name "Export to PDF"',
  ])
    .requiredOption('--product <id>', 'the product')
    .requiredOption('--code <code>', 'the code applications check: [a-z0-9][a-z0-9._-]{0,63}')
    .requiredOption('--name <name>', 'a readable name')
    .action(async (options: ApiOptions & { product: string; code: string; name: string }) => {
      const body = checked(
        CreateEntitlementBodySchema,
        { productId: options.product, code: options.code, name: options.name },
        fieldFlags,
      )
      const entitlement = await clientFor(io, options).createEntitlement(body)
      print(io, options, entitlement, `Created entitlement ${entitlement.id} (${entitlement.code}).`)
    })

  withListOptions(
    apiCommand(entitlements, 'list', 'List entitlements', [
      'keyturn entitlements list --product prd_3kTMd9qA8xYb2VnLr5sPwZ --sort code:asc',
    ]).option('--product <id>', 'only this product'),
  ).action(async (options: ApiOptions & ListOptions & { product?: string }) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListEntitlementsQuerySchema,
      extra: { productId: options.product },
      page: (query) => client.listEntitlements(query),
      iterate: (query) => client.iterateEntitlements(query),
      noun: 'entitlements',
      headers: ['id', 'code', 'name', 'product'],
      row: (entitlement: EntitlementResource) => [
        entitlement.id,
        entitlement.code,
        entitlement.name,
        entitlement.productId,
      ],
    })
  })

  apiCommand(entitlements, 'get <id>', 'Show an entitlement', [
    'keyturn entitlements get ent_2hGt6VpX9mQc4LwNs8KbZy',
  ]).action(async (id: EntitlementId, options: ApiOptions) => {
    const entitlement = await clientFor(io, options).getEntitlement(id)
    print(io, { ...options, json: true }, entitlement, '')
  })

  apiCommand(entitlements, 'update <id>', 'Rename an entitlement or change its code', [
    'keyturn entitlements update ent_2hGt6VpX9mQc4LwNs8KbZy --name "Export to PDF and PNG"',
  ])
    .option('--code <code>', 'the new code')
    .option('--name <name>', 'the new name')
    .action(async (id: EntitlementId, options: ApiOptions & { code?: string; name?: string }) => {
      const body = checked(
        UpdateEntitlementBodySchema,
        defined({ code: options.code, name: options.name }),
        fieldFlags,
      )
      const entitlement = await clientFor(io, options).updateEntitlement(id, body)
      print(io, options, entitlement, `Updated entitlement ${entitlement.id}.`)
    })

  apiCommand(entitlements, 'delete <id>', 'Delete an entitlement; policies and licenses lose it', [
    'keyturn entitlements delete ent_2hGt6VpX9mQc4LwNs8KbZy',
  ]).action(async (id: EntitlementId, options: ApiOptions) => {
    await clientFor(io, options).deleteEntitlement(id)
    if (options.json !== true) {
      io.print(`Deleted entitlement ${id}.`)
    }
  })
}

function print(io: Io, options: ApiOptions, entitlement: EntitlementResource, confirmation: string): void {
  if (options.json === true) {
    printJson(io, entitlement)
  } else {
    io.print(confirmation)
  }
}
