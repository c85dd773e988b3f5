import {
  IdParamsSchema,
  ListProductKeysQuerySchema,
  ProductIdSchema,
  ProductKeyListSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductKeyResource } from '../product-key-resource.js'
import type { TokenService } from '../token-service.js'

export function registerListProductKeys(api: App, tokens: TokenService): void {
  api.get(
    '/products/:id/keys',
    {
      schema: {
        operationId: 'listProductKeys',
        summary: "List a product's public signing keys, current and retired",
        description:
          'Current key first. Retired keys stay listed so tokens signed before a rotation keep verifying until they expire; give them all to `validateLicenseToken`.',
        tags: ['products'],
        params: IdParamsSchema(ProductIdSchema),
        querystring: ListProductKeysQuerySchema,
        response: { 200: ProductKeyListSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request) => {
      const page = await tokens.listKeys(request.principal, request.params.id, request.query)
      return { ...page, data: page.data.map(toProductKeyResource) }
    },
  )
}
