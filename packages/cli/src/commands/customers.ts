import type { CustomerResource } from '@keyturn/client'
import {
  CreateCustomerBodySchema,
  type CustomerId,
  ListCustomersQuerySchema,
  UpdateCustomerBodySchema,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, collect, defined, metadataFlags, orNull } from '../checks.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printFields, printJson } from '../output.js'

const fieldFlags = { email: '--email', name: '--name', metadata: '--metadata' }

interface CustomerOptions {
  readonly email?: string
  readonly name?: string
  readonly metadata?: string[]
}

function customerBody(options: CustomerOptions) {
  return defined({
    email: options.email,
    name: options.name === undefined ? undefined : orNull(options.name, '', (text) => text),
    metadata: metadataFlags(options.metadata),
  })
}

/** `keyturn customers …`: who owns licenses. */
export function registerCustomers(program: Command, io: Io): void {
  const customers = program
    .command('customers')
    .description('Customers: who owns licenses')
    .addHelpText(
      'after',
      '\nExample:\n  keyturn customers create --email ada@example.com --name "Ada Lovelace"',
    )

  apiCommand(customers, 'create', 'Create a customer (emails are unique, case-insensitively)', [
    'keyturn customers create --email ada@example.com --name "Ada Lovelace" --metadata stripeCustomerId=cus_Qh7',
  ])
    .requiredOption('--email <email>', 'the email address')
    .option('--name <name>', 'the name')
    .option('--metadata <key=value>', 'a metadata key (repeatable)', collect)
    .action(async (options: ApiOptions & CustomerOptions) => {
      const body = checked(CreateCustomerBodySchema, customerBody(options), fieldFlags)
      const customer = await clientFor(io, options).createCustomer(body)
      printCustomer(io, options, customer, `Created customer ${customer.id} (${customer.email}).`)
    })

  withListOptions(
    apiCommand(customers, 'list', 'List customers', [
      'keyturn customers list --filter email:eq:ada@example.com',
      'keyturn customers list --sort email:asc --all --json',
    ]),
  ).action(async (options: ApiOptions & ListOptions) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListCustomersQuerySchema,
      page: (query) => client.listCustomers(query),
      iterate: (query) => client.iterateCustomers(query),
      noun: 'customers',
      headers: ['id', 'email', 'name', 'created'],
      row: (customer: CustomerResource) => [customer.id, customer.email, customer.name, customer.createdAt],
    })
  })

  apiCommand(customers, 'get <id>', 'Show a customer', [
    'keyturn customers get cus_4nQw8ZkT2vLm6XcPb9RsJd',
  ]).action(async (id: CustomerId, options: ApiOptions) => {
    const customer = await clientFor(io, options).getCustomer(id)
    if (options.json === true) {
      printJson(io, customer)
      return
    }
    printFields(io, [
      ['id', customer.id],
      ['email', customer.email],
      ['name', customer.name ?? ''],
      ['metadata', JSON.stringify(customer.metadata)],
      ['created', customer.createdAt],
      ['updated', customer.updatedAt],
    ])
  })

  apiCommand(customers, 'update <id>', 'Change a customer; metadata keys are merged (key= removes one)', [
    'keyturn customers update cus_4nQw8ZkT2vLm6XcPb9RsJd --name "Ada King" --metadata vip=yes --metadata old=',
  ])
    .option('--email <email>', 'the new email address')
    .option('--name <name>', 'the new name ("" removes it)')
    .option('--metadata <key=value>', 'a metadata key to set, or key= to remove (repeatable)', collect)
    .action(async (id: CustomerId, options: ApiOptions & CustomerOptions) => {
      const body = checked(UpdateCustomerBodySchema, customerBody(options), fieldFlags)
      const customer = await clientFor(io, options).updateCustomer(id, body)
      printCustomer(io, options, customer, `Updated customer ${customer.id}.`)
    })

  apiCommand(customers, 'delete <id>', 'Delete a customer who owns no licenses', [
    'keyturn customers delete cus_4nQw8ZkT2vLm6XcPb9RsJd',
  ]).action(async (id: CustomerId, options: ApiOptions) => {
    await clientFor(io, options).deleteCustomer(id)
    if (options.json !== true) {
      io.print(`Deleted customer ${id}.`)
    }
  })
}

function printCustomer(io: Io, options: ApiOptions, customer: CustomerResource, confirmation: string): void {
  if (options.json === true) {
    printJson(io, customer)
  } else {
    io.print(confirmation)
  }
}
