import { IdParamsSchema, LicenseIdSchema, LicenseResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../../licenses/license-resource.js'
import type { UsageService } from '../usage-service.js'

export function registerResetLicenseUsage(api: App, usage: UsageService): void {
  api.post(
    '/licenses/:id/usage/reset',
    {
      schema: {
        operationId: 'resetLicenseUsage',
        summary: 'Reset the uses of a metered license to 0',
        description:
          'Sets `uses` to 0 and `usesResetAt` to now (a new billing period, say) and answers the license. Management keys only (admin, or the product key of the license).',
        tags: ['usage'],
        params: IdParamsSchema(LicenseIdSchema),
        response: { 200: LicenseResourceSchema, ...problemResponses('license_not_found') },
      },
    },
    async (request) => toLicenseResource(await usage.reset(request.principal, request.params.id)),
  )
}
