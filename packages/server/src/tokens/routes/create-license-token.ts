import {
  CreateLicenseTokenBodySchema,
  IdParamsSchema,
  LicenseIdSchema,
  LicenseTokenResourceSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../../licenses/license-resource.js'
import type { TokenService } from '../token-service.js'

export function registerCreateLicenseToken(api: App, tokens: TokenService): void {
  api.post(
    '/licenses/:id/tokens',
    {
      // After a crash between commit and response: a token is never stored: a retry after a crash gets a new one.
      config: { idempotencyRecovery: 'rerun', responseHoldsSecret: true, confirmsApiKey: true },
      schema: {
        operationId: 'createLicenseToken',
        summary: 'Generate a signed license token for offline validation',
        description:
          'A JWS compact JWT (`alg: EdDSA`, `typ: license+jwt`, `kid` = the product key id) signed with the product key; verify it with the product public key (`@keyturn/client` `validateLicenseToken`, or any JWT library with `aud` = productId). It expires after `ttl` seconds (default 30 days) or at the license expiration date, whichever is first. A revoked or expired license, or one of a suspended product, answers 409 `license_not_active`.',
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        body: CreateLicenseTokenBodySchema,
        response: {
          201: LicenseTokenResourceSchema,
          ...problemResponses('forbidden', 'license_not_found', 'license_not_active', 'activation_not_found'),
        },
      },
    },
    async (request, reply) => {
      const issued = await tokens.issue(request.principal, request.params.id, request.body)
      return reply
        .code(201)
        .send({ token: issued.token, payload: issued.payload, license: toLicenseResource(issued.view) })
    },
  )
}
