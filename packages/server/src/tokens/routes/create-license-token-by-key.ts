import { CreateLicenseTokenByKeyBodySchema, LicenseTokenResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../../licenses/license-resource.js'
import type { TokenService } from '../token-service.js'

export function registerCreateLicenseTokenByKey(api: App, tokens: TokenService): void {
  api.post(
    '/licenses/tokens',
    {
      // After a crash between commit and response: a token is never stored: a retry after a crash gets a new one.
      config: {
        idempotencyRecovery: 'rerun',
        responseHoldsSecret: true,
        applicationFacing: true,
        confirmsApiKey: true,
      },
      schema: {
        operationId: 'createLicenseTokenByKey',
        summary: 'Generate a license token for the license whose key is presented (for applications)',
        description:
          "As `createLicenseToken`, with the license found by `key` and `productId`; what a `client` API key embedded in an application may call. With `fingerprint` (an activated machine) the token is bound to that machine. With a client key, `customPayload` is refused (403 `forbidden`: anyone can extract a client key from a shipped application) and the lifetime is at most the product's `clientTokenTtl` (default 7 days; a longer `ttl` is shortened to it).",
        tags: ['licenses'],
        body: CreateLicenseTokenByKeyBodySchema,
        response: {
          201: LicenseTokenResourceSchema,
          ...problemResponses('forbidden', 'license_not_found', 'license_not_active', 'activation_not_found'),
        },
      },
    },
    async (request, reply) => {
      const issued = await tokens.issueByKey(request.principal, request.body)
      return reply
        .code(201)
        .send({ token: issued.token, payload: issued.payload, license: toLicenseResource(issued.view) })
    },
  )
}
