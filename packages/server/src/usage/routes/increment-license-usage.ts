import {
  IdParamsSchema,
  IncrementUsageBodySchema,
  LicenseIdSchema,
  LicenseResourceSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../../licenses/license-resource.js'
import type { UsageService } from '../usage-service.js'

export function registerIncrementLicenseUsage(api: App, usage: UsageService): void {
  api.post(
    '/licenses/:id/usage',
    {
      config: { confirmsApiKey: true },
      schema: {
        operationId: 'incrementLicenseUsage',
        summary: 'Count uses of a metered license (by license id)',
        description:
          'Adds `increment` (default 1) to `uses` atomically and answers the license. If that would pass `maxUses`, nothing is added: 409 `usage_limit_reached` with `uses` and `maxUses` in the problem. A revoked or expired license, or one of a suspended product, answers 409 `license_not_active`. Send an `Idempotency-Key` to make a retry safe: a replayed increment is not counted twice.',
        tags: ['usage'],
        params: IdParamsSchema(LicenseIdSchema),
        body: IncrementUsageBodySchema,
        response: {
          200: LicenseResourceSchema,
          ...problemResponses('license_not_found', 'license_not_active', 'usage_limit_reached'),
        },
      },
    },
    async (request) =>
      toLicenseResource(await usage.increment(request.principal, request.params.id, request.body)),
  )
}
