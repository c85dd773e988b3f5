import { IdParamsSchema, ProductIdSchema, ProductKeyResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductKeyResource } from '../product-key-resource.js'
import type { TokenService } from '../token-service.js'

export function registerRotateProductKey(api: App, tokens: TokenService): void {
  api.post(
    '/products/:id/keys/rotate',
    {
      schema: {
        operationId: 'rotateProductKey',
        summary: "Rotate a product's signing key",
        description:
          'Admin only. A new Ed25519 key becomes current (new tokens carry its `kid`); the previous key is retired but stays listed, so tokens it signed keep verifying until they expire.',
        tags: ['products'],
        params: IdParamsSchema(ProductIdSchema),
        response: { 201: ProductKeyResourceSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(toProductKeyResource(await tokens.rotate(request.principal, request.params.id))),
  )
}
