import { IdParamsSchema, ProductIdSchema, ProductResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductResource } from '../product-resource.js'
import type { ProductService } from '../product-service.js'

export function registerSuspendProduct(api: App, products: ProductService): void {
  api.post(
    '/products/:id/suspend',
    {
      schema: {
        operationId: 'suspendProduct',
        summary: 'Suspend a product',
        tags: ['products'],
        description:
          'Admin only; idempotent. Its licenses then validate as `isValid: false`, reason `suspended`.',
        params: IdParamsSchema(ProductIdSchema),
        response: { 200: ProductResourceSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request) => toProductResource(await products.suspend(request.principal, request.params.id)),
  )
}
