import { ListProductsQuerySchema, ProductListSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductResource } from '../product-resource.js'
import type { ProductService } from '../product-service.js'

export function registerListProducts(api: App, products: ProductService): void {
  api.get(
    '/products',
    {
      schema: {
        operationId: 'listProducts',
        summary: 'List products, a page at a time',
        tags: ['products'],
        description:
          'Sort fields: `createdAt` (default, desc), `updatedAt`, `name`. Filter fields: `status`, `createdAt`, `updatedAt`, `name`. A product key sees only its own product.',
        querystring: ListProductsQuerySchema,
        response: { 200: ProductListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await products.list(request.principal, request.query)
      return { ...page, data: page.data.map(toProductResource) }
    },
  )
}
