import { IdParamsSchema, LicenseIdSchema, LicenseResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerRevokeLicense(api: App, licenses: LicenseService): void {
  api.post(
    '/licenses/:id/revoke',
    {
      schema: {
        operationId: 'revokeLicense',
        summary: 'Revoke a license',
        description:
          'Idempotent. Validation answers `isValid: false`, reason `revoked`, until it is reinstated.',
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        response: { 200: LicenseResourceSchema, ...problemResponses('forbidden', 'license_not_found') },
      },
    },
    async (request) => toLicenseResource(await licenses.revoke(request.principal, request.params.id)),
  )
}
