import {
  IdParamsSchema,
  ProductIdSchema,
  ProductResourceSchema,
  UpdateProductBodySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductResource } from '../product-resource.js'
import type { ProductService } from '../product-service.js'

export function registerUpdateProduct(api: App, products: ProductService): void {
  api.patch(
    '/products/:id',
    {
      schema: {
        operationId: 'updateProduct',
        summary: 'Rename a product',
        tags: ['products'],
        description: 'Admin only.',
        params: IdParamsSchema(ProductIdSchema),
        body: UpdateProductBodySchema,
        response: { 200: ProductResourceSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request) =>
      toProductResource(await products.update(request.principal, request.params.id, request.body)),
  )
}
