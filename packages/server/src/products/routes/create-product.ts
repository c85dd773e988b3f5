import { CreateProductBodySchema, ProductResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toProductResource } from '../product-resource.js'
import type { ProductService } from '../product-service.js'

export function registerCreateProduct(api: App, products: ProductService): void {
  api.post(
    '/products',
    {
      schema: {
        operationId: 'createProduct',
        summary: 'Create a product with its own Ed25519 signing key',
        tags: ['products'],
        description:
          'Admin only. The signing key pair is generated here; the private key never leaves the server.',
        body: CreateProductBodySchema,
        response: { 201: ProductResourceSchema, ...problemResponses('forbidden') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(toProductResource(await products.create(request.principal, request.body))),
  )
}
