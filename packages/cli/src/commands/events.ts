import type { EventResource } from '@keyturn/client'
import { type EventId, ListEventsQuerySchema } from '@keyturn/protocol'
import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import { integer } from '../checks.js'
import { UsageError } from '../errors.js'
import type { Io } from '../io.js'
import { type ListOptions, printList, withListOptions } from '../list.js'
import { printFields, printJson } from '../output.js'

const headers = ['id', 'type', 'occurred', 'product', 'actor', 'request'] as const
const row = (event: EventResource) => [
  event.id,
  event.type,
  event.occurredAt,
  event.productId,
  `${event.actor.type} ${event.actor.id}`,
  event.requestId,
]

/** `keyturn events …`: the audit log (admin and product keys). */
export function registerEvents(program: Command, io: Io): void {
  const events = program
    .command('events')
    .description('Events: the audit log of every change (admin or product API key)')
    .addHelpText(
      'after',
      '\nExample:\n  keyturn events list --filter type:in:license.revoked|license.reinstated',
    )

  withListOptions(
    apiCommand(events, 'list', 'List events, newest first', [
      'keyturn events list --filter actor.id:eq:key_5bVn8cXz2LkJh4GfDs6aQw',
      'keyturn events list --filter actor.type:eq:system',
      'keyturn events list --filter licenseId:eq:lic_7fQx2mNc4RtYp9LkWv3bHs',
    ]),
  ).action(async (options: ApiOptions & ListOptions) => {
    const client = clientFor(io, options)
    await printList(io, {
      options,
      schema: ListEventsQuerySchema,
      page: (query) => client.listEvents(query),
      iterate: (query) => client.iterateEvents(query),
      noun: 'events',
      headers,
      row,
    })
  })

  apiCommand(events, 'get <id>', 'Show an event with its data', [
    'keyturn events get evt_01hzt0000000000000000000',
  ]).action(async (id: EventId, options: ApiOptions) => {
    const event = await clientFor(io, options).getEvent(id)
    if (options.json === true) {
      printJson(io, event)
      return
    }
    printFields(
      io,
      headers.map((name, index) => [name, row(event)[index]] as const),
    )
    io.print(JSON.stringify(event.data, null, 2))
  })

  apiCommand(events, 'tail', 'Follow new events as they happen (Ctrl+C stops)', [
    'keyturn events tail --type license.* --product prd_3kTMd9qA8xYb2VnLr5sPwZ',
  ])
    .option('--type <pattern>', 'only these types: an exact type or <resource>.*')
    .option('--product <id>', "only this product's events")
    .option('--interval <seconds>', 'seconds between polls (default 2)')
    .action(async (options: ApiOptions & { type?: string; product?: string; interval?: string }) => {
      const client = clientFor(io, options)
      const interval = options.interval === undefined ? 2 : integer(options.interval)
      if (typeof interval !== 'number' || interval < 1 || interval > 3600) {
        throw new UsageError('--interval must be a whole number of seconds, 1 to 3600')
      }
      const rules = [
        ...(options.product === undefined ? [] : [`productId:eq:${options.product}`]),
        ...(options.type === undefined || options.type.endsWith('*') ? [] : [`type:eq:${options.type}`]),
      ]
      const prefix = options.type?.endsWith('.*') === true ? options.type.slice(0, -1) : undefined
      const wanted = (event: EventResource) => prefix === undefined || event.type.startsWith(prefix)
      const filter = rules.length === 0 ? {} : { filter: rules.join(',') }
      // Start after the newest event: tail shows what happens from now on.
      const newest = (await client.listEvents({ ...filter, limit: 1 })).data[0]
      let after = newest?.id
      let stopped = false
      void io.untilShutdown().then(() => {
        stopped = true
      })
      while (!stopped) {
        const page = await client.listEvents({
          ...filter,
          sort: 'occurredAt:asc',
          limit: 100,
          ...(after === undefined ? {} : { starting_after: after }),
        })
        for (const event of page.data) {
          after = event.id
          if (wanted(event)) {
            io.print(
              options.json === true
                ? JSON.stringify(event)
                : row(event)
                    .map((cell) => cell ?? '-')
                    .join('  '),
            )
          }
        }
        if (!page.hasNextPage) {
          await new Promise((resolve) => setTimeout(resolve, interval * 1000))
        }
      }
    })
}
