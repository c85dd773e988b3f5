import { IdParamsSchema, ProductIdSchema, ProductResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductResource } from '../product-resource.js'
import type { ProductService } from '../product-service.js'

export function registerResumeProduct(api: App, products: ProductService): void {
  api.post(
    '/products/:id/resume',
    {
      schema: {
        operationId: 'resumeProduct',
        summary: 'Resume a suspended product',
        tags: ['products'],
        description: 'Admin only; idempotent.',
        params: IdParamsSchema(ProductIdSchema),
        response: { 200: ProductResourceSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request) => toProductResource(await products.resume(request.principal, request.params.id)),
  )
}
