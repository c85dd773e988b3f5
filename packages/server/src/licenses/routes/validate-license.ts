import { ValidateLicenseBodySchema, ValidationResultSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toValidationResult } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerValidateLicense(api: App, licenses: LicenseService): void {
  api.post(
    '/licenses/validate',
    {
      config: { applicationFacing: true, confirmsApiKey: true },
      schema: {
        operationId: 'validateLicense',
        summary: 'Validate a license key for a product',
        description:
          "The online validity check. A known key answers 200 with `isValid` and `reason`: `revoked`, else `expired`, else `suspended` (the product is suspended), else `payment_overdue` (a payment provider reported a failed subscription payment and the payment grace of its integration is over; valid during the grace), else `not_activated` (only when a `fingerprint` is sent and that machine holds no seat, also a floating seat whose lease lapsed), else `usage_exceeded` (a metered license whose `uses` reached `maxUses`). An unknown key, or a key of another product, answers 404 `license_not_found`. A valid answer for a license whose policy sets `checkInInterval` carries `checkInBy` (`timestamp` plus the interval) and the policy's `gracePeriod` when it sets one.",
        tags: ['licenses'],
        body: ValidateLicenseBodySchema,
        response: { 200: ValidationResultSchema, ...problemResponses('license_not_found') },
      },
    },
    async (request) => toValidationResult(await licenses.validate(request.principal, request.body)),
  )
}
