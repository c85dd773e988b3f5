import type { Command } from 'commander'
import { apiCommand } from '../api.js'
import type { Io } from '../io.js'
import { importKeygen, type KeygenImportOptions } from '../keygen/keygen-import.js'

/** `keyturn import <system> FILE`: moves another licensing system's export into Keyturn. */
export function registerImport(program: Command, io: Io): void {
  const imports = program.command('import').description('Move another licensing system into Keyturn')
  apiCommand(
    imports,
    'keygen <file>',
    'Import a Keygen account export (keygen:export): products, policies, entitlements, licenses with their keys, machines, and users as customers',
    [
      'keyturn import keygen account.export --dry-run',
      'KEYGEN_EXPORT_SECRET_KEY=… keyturn import keygen account.export',
    ],
  )
    .option('--dry-run', 'read the file and print what it maps to and what cannot be mapped; send nothing')
    .option(
      '--secret-key <key>',
      'the secret key the export was encrypted with (KEYGEN_EXPORT_SECRET_KEY, which keeps it out of `ps`)',
    )
    .addHelpText(
      'after',
      `
Reads the file Keygen's self-hosted export writes (format version 1, encrypted or not). Products
and policies are made with the Keygen id in their metadata (keygenId) and found by it again;
entitlements by code. Licenses keep their keys, status (suspended: imported revoked, with
metadata importedStatus "suspended"), expiry, seat and use limits, uses, metadata and entitlements,
with their Keygen id as externalId; their machines keep their fingerprint, name and last heartbeat
(lastSeenAt); their owners become customers (by email). Groups, key pools, processes, components,
releases, roles, tokens and webhook endpoints are not mapped: --dry-run lists them and why. Running
the import again makes nothing twice. Needs an admin API key.`,
    )
    .action(async (file: string, options: KeygenImportOptions) => {
      await importKeygen(io, file, options)
    })
}
