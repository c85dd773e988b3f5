import { IdParamsSchema, LicenseIdSchema, LicenseResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerReinstateLicense(api: App, licenses: LicenseService): void {
  api.post(
    '/licenses/:id/reinstate',
    {
      schema: {
        operationId: 'reinstateLicense',
        summary: 'Reinstate a revoked license',
        description:
          'Idempotent. Clears the revocation: the status becomes `expired` if the expiration date has passed, else `active`.',
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        response: { 200: LicenseResourceSchema, ...problemResponses('forbidden', 'license_not_found') },
      },
    },
    async (request) => toLicenseResource(await licenses.reinstate(request.principal, request.params.id)),
  )
}
