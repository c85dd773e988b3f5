import type { App } from '../../http/app-types.js'
import type { ProductService } from '../product-service.js'
import { registerCreateProduct } from './create-product.js'
import { registerGetProduct } from './get-product.js'
import { registerListProducts } from './list-products.js'
import { registerResumeProduct } from './resume-product.js'
import { registerSuspendProduct } from './suspend-product.js'
import { registerUpdateProduct } from './update-product.js'

/** Every route of the products feature, on the API scope (under /api/v0, behind authentication). */
export function registerProductsRoutes(api: App, products: ProductService): void {
  registerListProducts(api, products)
  registerCreateProduct(api, products)
  registerGetProduct(api, products)
  registerUpdateProduct(api, products)
  registerSuspendProduct(api, products)
  registerResumeProduct(api, products)
}
