import {
  IdParamsSchema,
  LicenseIdSchema,
  LicenseResourceSchema,
  RenewLicenseBodySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerRenewLicense(api: App, licenses: LicenseService): void {
  api.post(
    '/licenses/:id/renew',
    {
      schema: {
        operationId: 'renewLicense',
        summary: 'Extend a license by a duration (a renewal)',
        description:
          "The new `expirationDate` is max(now, current expirationDate) + `duration` (seconds; default: the license's policy duration, required when there is none): an early renewal loses no paid time, a lapsed one starts from now. A license waiting for its first activation gets the time added to what that activation starts. A revoked license stays revoked; one that never expires is 409 `license_does_not_expire`. Send an `Idempotency-Key` so a retried renewal extends only once.",
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        body: RenewLicenseBodySchema,
        response: {
          200: LicenseResourceSchema,
          ...problemResponses('forbidden', 'license_not_found', 'license_does_not_expire'),
        },
      },
    },
    async (request) =>
      toLicenseResource(await licenses.renew(request.principal, request.params.id, request.body)),
  )
}
