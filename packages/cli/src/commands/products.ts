import type { ProductKeyResource, ProductResource } from '@keyturn/client'
import {
  CreateProductBodySchema,
  ListProductsQuerySchema,
  maxPageLimit,
  type ProductId,
  UpdateProductBodySchema,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, defined, integer } from '../checks.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printFields, printJson, printTable } from '../output.js'

const fieldFlags = { name: '--name', clientTokenTtl: '--client-token-ttl' }
const clientTokenTtlHelp =
  'longest token a client API key obtains, 3600 to 31536000 seconds (default 604800, 7 days)'
const optionalInteger = (value: string | undefined) => (value === undefined ? undefined : integer(value))

/** `keyturn products …`: products and their signing keys (admin keys only). */
export function registerProducts(program: Command, io: Io): void {
  const products = program
    .command('products')
    .description('Products and their signing keys (admin API key)')
    .addHelpText('after', '\nExample:\n  keyturn products create --name "Acme Photo Editor"')

  apiCommand(products, 'create', 'Create a product (with its own Ed25519 signing key pair)', [
    'keyturn products create --name "Acme Photo Editor"',
    'keyturn products create --name "Acme Photo Editor" --client-token-ttl 86400',
  ])
    .requiredOption('--name <name>', 'the product name')
    .option('--client-token-ttl <seconds>', clientTokenTtlHelp)
    .option('--sign-responses', 'always sign its application-facing answers (RFC 9421)')
    .action(
      async (options: ApiOptions & { name: string; clientTokenTtl?: string; signResponses?: boolean }) => {
        const body = checked(
          CreateProductBodySchema,
          defined({
            name: options.name,
            clientTokenTtl: optionalInteger(options.clientTokenTtl),
            signResponses: options.signResponses,
          }),
          fieldFlags,
        )
        const product = await clientFor(io, options).createProduct(body)
        printProduct(io, options, product, `Created product ${product.id} (${product.name}).`)
      },
    )

  withListOptions(
    apiCommand(products, 'list', 'List products', [
      'keyturn products list --sort name:asc',
      'keyturn products list --filter status:eq:suspended --all --json',
    ]),
  ).action(async (options: ApiOptions & ListOptions) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListProductsQuerySchema,
      page: (query) => client.listProducts(query),
      iterate: (query) => client.iterateProducts(query),
      noun: 'products',
      headers: ['id', 'name', 'status', 'created'],
      row: (product: ProductResource) => [product.id, product.name, product.status, product.createdAt],
    })
  })

  apiCommand(products, 'get <id>', 'Show a product, with its current public key', [
    'keyturn products get prd_3kTMd9qA8xYb2VnLr5sPwZ',
  ]).action(async (id: ProductId, options: ApiOptions) => {
    const product = await clientFor(io, options).getProduct(id)
    if (options.json === true) {
      printJson(io, product)
      return
    }
    printFields(io, productFields(product))
    io.print('')
    io.print(product.publicKey.trimEnd())
  })

  apiCommand(products, 'update <id>', 'Rename a product or change its settings', [
    'keyturn products update prd_3kTMd9qA8xYb2VnLr5sPwZ --name "Acme Photo Editor Pro"',
    'keyturn products update prd_3kTMd9qA8xYb2VnLr5sPwZ --client-token-ttl 86400',
    'keyturn products update prd_3kTMd9qA8xYb2VnLr5sPwZ --sign-responses',
  ])
    .option('--name <name>', 'the new name')
    .option('--client-token-ttl <seconds>', clientTokenTtlHelp)
    .option('--sign-responses', 'always sign its application-facing answers (RFC 9421)')
    .option('--no-sign-responses', 'sign them only when the request asks (Keyturn-Sign: ed25519)')
    .action(
      async (
        id: ProductId,
        options: ApiOptions & { name?: string; clientTokenTtl?: string; signResponses?: boolean },
      ) => {
        const body = checked(
          UpdateProductBodySchema,
          defined({
            name: options.name,
            clientTokenTtl: optionalInteger(options.clientTokenTtl),
            signResponses: options.signResponses,
          }),
          fieldFlags,
        )
        const product = await clientFor(io, options).updateProduct(id, body)
        printProduct(io, options, product, `Updated product ${product.id} (${product.name}).`)
      },
    )

  apiCommand(
    products,
    'suspend <id>',
    'Suspend a product: its licenses validate as invalid (reason suspended) until it is resumed',
    ['keyturn products suspend prd_3kTMd9qA8xYb2VnLr5sPwZ'],
  ).action(async (id: ProductId, options: ApiOptions) => {
    const product = await clientFor(io, options).suspendProduct(id)
    printProduct(io, options, product, `Suspended product ${product.id}.`)
  })

  apiCommand(products, 'resume <id>', 'Resume a suspended product', [
    'keyturn products resume prd_3kTMd9qA8xYb2VnLr5sPwZ',
  ]).action(async (id: ProductId, options: ApiOptions) => {
    const product = await clientFor(io, options).resumeProduct(id)
    printProduct(io, options, product, `Resumed product ${product.id}.`)
  })

  apiCommand(
    products,
    'keys <id>',
    "List a product's public signing keys: the current one, then retired ones",
    ['keyturn products keys prd_3kTMd9qA8xYb2VnLr5sPwZ'],
  ).action(async (id: ProductId, options: ApiOptions) => {
    // A product has a handful of keys (one per rotation): one page of the largest size holds them.
    const keys = await clientFor(io, options).listProductKeys(id, { limit: maxPageLimit })
    if (options.json === true) {
      printJson(io, keys)
      return
    }
    printTable(
      io,
      ['key id', 'current', 'created', 'retired'],
      keys.data.map((key: ProductKeyResource) => [
        key.keyId,
        key.isCurrent ? 'yes' : 'no',
        key.createdAt,
        key.retiredAt,
      ]),
    )
  })

  apiCommand(
    products,
    'rotate-key <id>',
    'Give a product a new signing key; tokens signed with the old one keep verifying until they expire',
    ['keyturn products rotate-key prd_3kTMd9qA8xYb2VnLr5sPwZ'],
  ).action(async (id: ProductId, options: ApiOptions) => {
    const key = await clientFor(io, options).rotateProductKey(id)
    if (options.json === true) {
      printJson(io, key)
      return
    }
    io.print(`Rotated the signing key of ${key.productId}: the current key is now ${key.keyId}.`)
  })
}

function productFields(product: ProductResource) {
  return [
    ['id', product.id],
    ['name', product.name],
    ['status', product.status],
    ['client token ttl', `${product.clientTokenTtl} s`],
    ['signed answers', product.signResponses ? 'always' : 'when asked'],
    ['key id', product.keyId],
    ['created', product.createdAt],
    ['updated', product.updatedAt],
  ] as const
}

function printProduct(io: Io, options: ApiOptions, product: ProductResource, confirmation: string): void {
  if (options.json === true) {
    printJson(io, product)
  } else {
    io.print(confirmation)
  }
}
