import { CreateEntitlementBodySchema, EntitlementResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toEntitlementResource } from '../entitlement-resource.js'
import type { EntitlementService } from '../entitlement-service.js'

export function registerCreateEntitlement(api: App, entitlements: EntitlementService): void {
  api.post(
    '/entitlements',
    {
      schema: {
        operationId: 'createEntitlement',
        summary: 'Create an entitlement (a feature) of a product',
        description:
          'A code is unique per product (409 `entitlement_code_taken`). Licenses and policies list entitlements by code.',
        tags: ['entitlements'],
        body: CreateEntitlementBodySchema,
        response: {
          201: EntitlementResourceSchema,
          ...problemResponses('forbidden', 'product_not_found', 'entitlement_code_taken'),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(toEntitlementResource(await entitlements.create(request.principal, request.body))),
  )
}
