import { IdParamsSchema, ProductIdSchema, ProductResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductResource } from '../product-resource.js'
import type { ProductService } from '../product-service.js'

export function registerGetProduct(api: App, products: ProductService): void {
  api.get(
    '/products/:id',
    {
      schema: {
        operationId: 'getProduct',
        summary: 'Retrieve a product and its current public key',
        description:
          "The public key (PEM and JWK) verifies the product's license tokens offline; retired keys are listed by `GET /products/{id}/keys`.",
        tags: ['products'],
        params: IdParamsSchema(ProductIdSchema),
        response: { 200: ProductResourceSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request) => toProductResource(await products.get(request.principal, request.params.id)),
  )
}
