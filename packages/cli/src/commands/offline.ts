import { readFile, writeFile } from 'node:fs/promises'
import { createActivationRequest, InvalidOptionError } from '@keyturn/client'
import { MachineFingerprintError, machineFingerprint } from '@keyturn/client/node'
import {
  ActivateOfflineBodySchema,
  type ActivationId,
  CreateLicenseFileBodySchema,
  DeactivateOfflineBodySchema,
  type LicenseFileResource,
  type LicenseId,
} from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { checked, defined, integer } from '../checks.js'
import { UsageError } from '../errors.js'
import type { Io } from '../io.js'
import { printJson } from '../output.js'

/** `keyturn offline …`: machines without a network, activated and deactivated through files and codes. */
export function registerOffline(program: Command, io: Io): void {
  const offline = program
    .command('offline')
    .description(
      'Offline activation: a machine without a network sends a request file and gets its license file',
    )
    .addHelpText(
      'after',
      '\nExample:\n  keyturn offline activate lab-pc-4.request --out lab-pc-4.license\n\nThe whole round trip: docs/guides/offline.md, "Air-gapped machines".',
    )

  offline
    .command('request')
    .description(
      "On the machine: write an activation request file for the vendor (no server needed; --salt reads this machine's fingerprint)",
    )
    .option('--key <license-key>', 'the license key (KEYTURN_LICENSE_KEY, which keeps it out of `ps`)')
    .requiredOption('--product <id>', 'the product id')
    .option('--fingerprint <fingerprint>', "the machine's fingerprint, as the application computes it")
    .option(
      '--salt <salt>',
      "else: this machine's fingerprint from its OS id, hashed with the product's salt",
    )
    .option('--name <name>', 'the activation name, e.g. the host name')
    .option('--platform <platform>', 'e.g. linux-x64 (the activation metadata `platform`)')
    .option('--out <file>', 'write the request here (else it is printed)')
    .addHelpText(
      'after',
      '\nExample:\n  KEYTURN_LICENSE_KEY=7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A keyturn offline request --product prd_3kTMd9qA8xYb2VnLr5sPwZ --salt my-app-salt --name lab-pc-4 --out lab-pc-4.request',
    )
    .action(async (options: RequestOptions) => {
      const licenseKey = options.key ?? io.env.KEYTURN_LICENSE_KEY
      if (licenseKey === undefined || licenseKey === '') {
        throw new UsageError('no license key: pass --key or set KEYTURN_LICENSE_KEY')
      }
      if ((options.fingerprint === undefined) === (options.salt === undefined)) {
        throw new UsageError("give the machine's fingerprint with either --fingerprint or --salt")
      }
      const fingerprint = options.fingerprint ?? thisMachine(options.salt ?? '', io)
      const request = await createActivationRequest({
        licenseKey,
        productId: options.product,
        fingerprint,
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.platform === undefined ? {} : { platform: options.platform }),
      }).catch((error: unknown) => {
        throw error instanceof InvalidOptionError ? new UsageError(error.message) : error
      })
      if (options.out === undefined) {
        io.print(request.trimEnd())
        return
      }
      await writeTextFile(options.out, request)
      io.print(`Request written to ${options.out}: send it to your vendor.`)
    })

  apiCommand(
    offline,
    'activate <request-file>',
    "Activate the machine that wrote an activation request file; writes the machine's license file (--out) or prints it",
    [
      'keyturn offline activate lab-pc-4.request --out lab-pc-4.license',
      'keyturn offline activate lab-pc-4.request > lab-pc-4.license',
    ],
  )
    .option('--out <file>', 'write the license file here (else it is printed)')
    .action(async (requestFile: string, options: ApiOptions & { out?: string }) => {
      const request = await readFile(requestFile, 'utf8').catch((error: unknown) => {
        throw new UsageError(`cannot read ${requestFile}: ${error instanceof Error ? error.message : error}`)
      })
      const body = checked(ActivateOfflineBodySchema, { request }, { request: '<request-file>' })
      const answer = await clientFor(io, options).activateOffline(body)
      if (options.out !== undefined) {
        await writeLicenseFile(options.out, answer.licenseFile)
      }
      if (options.json === true) {
        printJson(io, answer)
        return
      }
      if (options.out === undefined) {
        io.print(answer.licenseFile.trimEnd())
        return
      }
      const { activation } = answer
      io.print(
        `Activated ${activation.id} (license ${activation.licenseId}, machine ${activation.fingerprint}).`,
      )
      io.print(`License file written to ${options.out}; it expires ${answer.expiresAt ?? 'never'}.`)
    })

  apiCommand(
    offline,
    'deactivate <activation-id> <code>',
    'Free the seat of a machine by the deactivation code it printed (5 wrong codes lock it for an hour)',
    ['keyturn offline deactivate act_9pLm3xQv7TbN2cRw5KsYdA Q2M4-7XKD-3H9P-T6WB'],
  ).action(async (id: ActivationId, code: string, options: ApiOptions) => {
    const body = checked(DeactivateOfflineBodySchema, { code }, { code: '<code>' })
    await clientFor(io, options).deactivateOffline(id, body)
    // No answer body: --json prints nothing, as for `activations deactivate`.
    if (options.json !== true) {
      io.print(`Deactivated ${id}: its seat is free.`)
    }
  })
}

/** `keyturn licenses license-file <id>`: a signed license file for a license, or for one of its machines. */
export function registerLicenseFileCommand(licenses: Command, io: Io): void {
  apiCommand(
    licenses,
    'license-file <id>',
    'Issue a signed license file for offline use (prints it, or --out FILE; --json for the answer)',
    [
      'keyturn licenses license-file lic_7fQx2mNc4RtYp9LkWv3bHs --ttl never --out customer.license',
      'keyturn licenses license-file lic_7fQx2mNc4RtYp9LkWv3bHs --activation act_9pLm3xQv7TbN2cRw5KsYdA --encrypt',
    ],
  )
    .option('--ttl <seconds>', "file lifetime in seconds, or 'never' (default: the policy's, else a year)")
    .option('--encrypt', 'encrypt the file for the license key (and, with --activation, the machine)')
    .option('--activation <id>', "a machine file, bound to this activation's machine")
    .option('--out <file>', 'write the license file here (else it is printed)')
    .action(
      async (
        id: LicenseId,
        options: ApiOptions & { ttl?: string; encrypt?: boolean; activation?: ActivationId; out?: string },
      ) => {
        const body = checked(
          CreateLicenseFileBodySchema,
          defined({
            ttl:
              options.ttl === undefined ? undefined : options.ttl === 'never' ? null : integer(options.ttl),
            encrypt: options.encrypt,
          }),
          { ttl: '--ttl', encrypt: '--encrypt' },
        )
        const client = clientFor(io, options)
        let issued: LicenseFileResource
        if (options.activation === undefined) {
          issued = await client.createLicenseFile(id, body)
        } else {
          const activation = await client.getActivation(options.activation)
          if (activation.licenseId !== id) {
            throw new UsageError(`activation ${options.activation} is not one of license ${id}'s`)
          }
          issued = await client.createActivationLicenseFile(options.activation, body)
        }
        if (options.out !== undefined) {
          await writeLicenseFile(options.out, issued.licenseFile)
        }
        if (options.json === true) {
          printJson(io, issued)
        } else if (options.out === undefined) {
          io.print(issued.licenseFile.trimEnd())
        } else {
          io.print(`License file written to ${options.out}; it expires ${issued.expiresAt ?? 'never'}.`)
        }
      },
    )
}

interface RequestOptions {
  readonly key?: string
  readonly product: string
  readonly fingerprint?: string
  readonly salt?: string
  readonly name?: string
  readonly platform?: string
  readonly out?: string
}

function thisMachine(salt: string, io: Io): string {
  try {
    return machineFingerprint({ salt, env: { ...io.env } })
  } catch (error) {
    throw error instanceof MachineFingerprintError ? new UsageError(error.message) : error
  }
}

async function writeTextFile(path: string, text: string): Promise<void> {
  await writeFile(path, text).catch((error: unknown) => {
    throw new UsageError(`cannot write ${path}: ${error instanceof Error ? error.message : error}`)
  })
}

async function writeLicenseFile(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 }).catch((error: unknown) => {
    throw new UsageError(`cannot write ${path}: ${error instanceof Error ? error.message : error}`)
  })
}
