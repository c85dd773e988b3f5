import {
  IdParamsSchema,
  LicenseIdSchema,
  LicenseResourceSchema,
  UpdateLicenseBodySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { LicenseService } from '../license-service.js'
import { toLicenseResource } from './license-resource.js'

export function registerUpdateLicense(api: App, licenses: LicenseService): void {
  api.patch(
    '/licenses/:id',
    {
      schema: {
        operationId: 'updateLicense',
        summary: 'Change the activation limit or expiration date of a license',
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        body: UpdateLicenseBodySchema,
        response: {
          200: LicenseResourceSchema,
          ...problemResponses('license_not_found', 'product_suspended'),
        },
      },
    },
    async (request) =>
      toLicenseResource(await licenses.update(request.principal, request.params.id, request.body)),
  )
}
