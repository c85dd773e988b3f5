import {
  StatsFailuresQuerySchema,
  StatsFailuresSchema,
  StatsQuerySchema,
  StatsSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { FailuresService } from '../failures-service.js'
import type { StatsService } from '../stats-service.js'

/** Every route of the statistics feature, on the API scope (under /api/v0, behind authentication). */
export function registerStatsRoutes(api: App, stats: StatsService, failures: FailuresService): void {
  api.get(
    '/stats',
    {
      schema: {
        operationId: 'getStats',
        summary: 'Daily counts per product, and figures of now',
        description:
          'Roles: `admin` (every product summed, or one with `productId`) and `product` (its own product; another `productId` answers 404); a `client` key is refused (403). One entry per UTC day from `from` to `to` (inclusive, at most 366 days; default the last 30 days to today): validations that answered valid and not valid (of known licenses), machines activated and deactivated, licenses created, renewed and revoked. Each serving process counts in memory and adds its counts to the stored days every 5 seconds and when it stops, so the figures lag by up to 5 seconds and a process that crashes loses at most its last 5 seconds of counts. `now` is read at the request: activations holding a seat, and licenses not revoked that expire within 30 days. A `from` after `to`, a range over 366 days or a day the calendar lacks answers 400 `validation_failed`.',
        tags: ['stats'],
        querystring: StatsQuerySchema,
        response: { 200: StatsSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request) => stats.get(request.principal, request.query),
  )
  api.get(
    '/stats/failures',
    {
      schema: {
        operationId: 'getStatsFailures',
        summary: 'The latest failing webhook deliveries and rate-limited clients',
        description:
          "Roles: `admin` (every product, or one with `productId`) and `product` (its own product; another `productId` answers 404); a `client` key is refused (403). Operators: `viewer` and above. `webhookDeliveries`: up to 20 deliveries whose last attempt failed, latest attempt first: still retried (`pending`, with `nextAttemptAt`) or given up (`failed`); a product key sees its own endpoints' deliveries, an admin asking for a product sees the deliveries of that product's events. `rateLimited`: up to 20 clients the rate limits answered 429, latest first, with how often and when; a product key sees only requests made with its product's keys. Refusals are recorded in the serving process's memory (at most 200 clients, the longest-quiet forgotten first), so they start empty when the process starts (`rateLimitedSince`) and, with several workers, each worker answers with its own.",
        tags: ['stats'],
        querystring: StatsFailuresQuerySchema,
        response: { 200: StatsFailuresSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request) => failures.latest(request.principal, request.query),
  )
}
