import type { ProductId } from '@keyturn/client'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import type { Io } from '../io.js'
import { printJson, printTable } from '../output.js'

interface StatsOptions extends ApiOptions {
  readonly from?: string
  readonly to?: string
  readonly product?: string
}

/** `keyturn stats`: the daily counts the dashboard's overview draws, as a table (admin or product key). */
export function registerStats(program: Command, io: Io): void {
  apiCommand(
    program,
    'stats',
    'Daily counts (validations, activations, licenses created, renewed, revoked) and the figures of now',
    ['keyturn stats', 'keyturn stats --product prd_3kTMd9qA8xYb2VnLr5sPwZ --from 2026-11-01 --to 2026-11-30'],
  )
    .option('--from <day>', 'the first UTC day, YYYY-MM-DD (default: 29 days before --to)')
    .option('--to <day>', 'the last UTC day, YYYY-MM-DD (default: today); at most 366 days in all')
    .option('--product <id>', "only this product's counts (default: every product the key sees)")
    .action(async (options: StatsOptions) => {
      const stats = await clientFor(io, options).stats({
        ...(options.from === undefined ? {} : { from: options.from }),
        ...(options.to === undefined ? {} : { to: options.to }),
        ...(options.product === undefined ? {} : { productId: options.product as ProductId }),
      })
      if (options.json === true) {
        printJson(io, stats)
        return
      }
      const row = (date: string, counts: typeof stats.totals) => [
        date,
        String(counts.validationsValid),
        String(counts.validationsInvalid),
        String(counts.activations),
        String(counts.deactivations),
        String(counts.licensesCreated),
        String(counts.licensesRenewed),
        String(counts.licensesRevoked),
        String(counts.licensesSold),
        String(counts.paymentFailures),
        String(counts.refundRevocations),
      ]
      printTable(
        io,
        [
          'day',
          'valid',
          'not valid',
          'activated',
          'deactivated',
          'created',
          'renewed',
          'revoked',
          'sold',
          'payments failed',
          'refunded',
        ],
        [...stats.days.map((day) => row(day.date, day)), row('total', stats.totals)],
      )
      io.print(
        `Now: ${stats.now.activeMachines} active machines, ${stats.now.licensesExpiringSoon} licenses expiring within 30 days.`,
      )
    })
}
