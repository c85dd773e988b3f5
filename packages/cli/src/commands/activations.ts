import type { ActivationResource } from '@keyturn/client'
import {
  ActivateLicenseBodySchema,
  type ActivationId,
  type LicenseId,
  ListActivationsQuerySchema,
  ListAllActivationsQuerySchema,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, defined, json } from '../checks.js'
import { UsageError } from '../errors.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printJson, show } from '../output.js'

/** `keyturn activations …`: the machines holding a license's seats. */
export function registerActivations(program: Command, io: Io): void {
  const activations = program
    .command('activations')
    .description("Activations: the machines holding a license's seats (maxActivations)")
    .addHelpText('after', '\nExample:\n  keyturn activations list lic_7fQx2mNc4RtYp9LkWv3bHs')

  withListOptions(
    apiCommand(
      activations,
      'list [license-id]',
      "List a license's activations; without a license, every license's (newest first)",
      [
        'keyturn activations list lic_7fQx2mNc4RtYp9LkWv3bHs --sort lastSeenAt:desc',
        'keyturn activations list --product prd_3kTMd9qA8xYb2VnLr5sPwZ --limit 1',
      ],
    ).option('--product <id>', 'without a license: only this product’s activations'),
  ).action(
    async (licenseId: LicenseId | undefined, options: ApiOptions & ListOptions & { product?: string }) => {
      const client = clientFor(io, options)
      const columns = {
        headers: ['id', 'fingerprint', 'name', 'created', 'last seen', 'lease ends'],
        row: (activation: ActivationResource) => [
          activation.id,
          activation.fingerprint,
          activation.name,
          activation.createdAt,
          activation.lastSeenAt,
          show(activation.expiresAt, 'never'),
        ],
      }
      if (licenseId !== undefined) {
        if (options.product !== undefined) {
          throw new UsageError('--product lists every license’s activations: leave out the license id')
        }
        await printList(io, {
          options,
          schema: ListActivationsQuerySchema,
          page: (query) => client.listActivations(licenseId, query),
          iterate: (query) => client.iterateActivations(licenseId, query),
          noun: 'activations',
          ...columns,
        })
        return
      }
      await printList(io, {
        options,
        schema: ListAllActivationsQuerySchema,
        extra: { productId: options.product },
        page: (query) => client.listAllActivations(query),
        iterate: (query) => client.iterateAllActivations(query),
        noun: 'activations',
        headers: ['id', 'license', ...columns.headers.slice(1)],
        row: (activation: ActivationResource) => [
          activation.id,
          activation.licenseId,
          ...columns.row(activation).slice(1),
        ],
      })
    },
  )

  apiCommand(
    activations,
    'activate <license-id>',
    'Activate a machine on a license (again: refreshes it); refused when every seat is taken',
    [
      'keyturn activations activate lic_7fQx2mNc4RtYp9LkWv3bHs --fingerprint 4f9c2b7e1a6d3f08 --name "Ada’s laptop"',
    ],
  )
    .requiredOption('--fingerprint <fingerprint>', 'identifies the machine (1 to 256 characters)')
    .option('--name <name>', 'a name people recognise')
    .option('--metadata <json>', 'a JSON object kept with the activation')
    .action(
      async (
        licenseId: LicenseId,
        options: ApiOptions & { fingerprint: string; name?: string; metadata?: string },
      ) => {
        const body = checked(
          ActivateLicenseBodySchema,
          defined({
            fingerprint: options.fingerprint,
            name: options.name,
            metadata: options.metadata === undefined ? undefined : json(options.metadata, '--metadata'),
          }),
          { fingerprint: '--fingerprint', name: '--name', metadata: '--metadata' },
        )
        const activation = await clientFor(io, options).activateLicense(licenseId, body)
        if (options.json === true) {
          printJson(io, activation)
          return
        }
        io.print(`Activated ${activation.fingerprint} on ${activation.licenseId}: ${activation.id}.`)
      },
    )

  apiCommand(
    activations,
    'heartbeat <activation-id>',
    "Renew a floating seat's lease (exit 1 with activation_not_found once it lapsed)",
    ['keyturn activations heartbeat act_9pLm3xQv7TbN2cRw5KsYdA'],
  ).action(async (id: ActivationId, options: ApiOptions) => {
    const activation = await clientFor(io, options).heartbeatActivation(id)
    if (options.json === true) {
      printJson(io, activation)
      return
    }
    io.print(
      activation.expiresAt === null
        ? `Heartbeat of ${activation.id}: its license has no heartbeat TTL, the seat never lapses.`
        : `Heartbeat of ${activation.id}: holds its seat until ${activation.expiresAt}.`,
    )
  })

  apiCommand(activations, 'deactivate <activation-id>', 'Deactivate a machine: its seat is free at once', [
    'keyturn activations deactivate act_9pLm3xQv7TbN2cRw5KsYdA',
  ]).action(async (id: ActivationId, options: ApiOptions) => {
    await clientFor(io, options).deleteActivation(id)
    // The API answers 204 without a body: --json prints nothing, the exit code says it worked.
    if (options.json !== true) {
      io.print(`Deactivated ${id}.`)
    }
  })
}
