import {
  IdParamsSchema,
  LicenseIdSchema,
  LicenseResourceSchema,
  UpdateLicenseBodySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerUpdateLicense(api: App, licenses: LicenseService): void {
  api.patch(
    '/licenses/:id',
    {
      schema: {
        operationId: 'updateLicense',
        summary: 'Change the activation limit or expiration date of a license',
        description:
          'Only the fields given change. `maxActivations` below the current count keeps existing activations and refuses new ones; `expirationDate` must be in the future (`null`: never expires). A license of a suspended product cannot be changed (`409 product_suspended`).',
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        body: UpdateLicenseBodySchema,
        response: {
          200: LicenseResourceSchema,
          ...problemResponses('forbidden', 'license_not_found', 'product_suspended'),
        },
      },
    },
    async (request) =>
      toLicenseResource(await licenses.update(request.principal, request.params.id, request.body)),
  )
}
