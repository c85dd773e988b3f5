import { IncrementUsageByKeyBodySchema, LicenseResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../../licenses/license-resource.js'
import type { UsageService } from '../usage-service.js'

export function registerIncrementLicenseUsageByKey(api: App, usage: UsageService): void {
  api.post(
    '/licenses/usage',
    {
      config: { applicationFacing: true, confirmsApiKey: true },
      schema: {
        operationId: 'incrementLicenseUsageByKey',
        summary: 'Count uses of a metered license (by key: what an application calls)',
        description:
          'As `incrementLicenseUsage`, found by `key` and `productId`: adds `increment` (default 1) to `uses` unless that would pass `maxUses` (409 `usage_limit_reached`, nothing added). An unknown key, or one of another product, answers 404 `license_not_found`. Send an `Idempotency-Key` to make a retry safe.',
        tags: ['usage'],
        body: IncrementUsageByKeyBodySchema,
        response: {
          200: LicenseResourceSchema,
          ...problemResponses('license_not_found', 'license_not_active', 'usage_limit_reached'),
        },
      },
    },
    async (request) => toLicenseResource(await usage.incrementByKey(request.principal, request.body)),
  )
}
