import type { ApiKeyId, ProductId, ProductStatus } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { SigningKeyRecord } from '../tokens/signing-keys.js'
import type { Product, ProductView } from './product.js'

export type ProductSortField = 'createdAt' | 'updatedAt' | 'name'
export type ProductFilterField = 'status' | 'createdAt' | 'updatedAt' | 'name'

const productStatuses: readonly ProductStatus[] = ['active', 'suspended']

export const productListSpec = {
  sortFields: ['createdAt', 'updatedAt', 'name'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<ProductSortField>,
  filterFields: {
    status: { type: 'enum', values: productStatuses },
    createdAt: { type: 'timestamp' },
    updatedAt: { type: 'timestamp' },
    name: { type: 'string' },
  } satisfies FieldKinds<ProductFilterField>,
} as const

export interface ProductListQuery {
  readonly request: ListRequest<ProductSortField, ProductFilterField>
  /** A product key sees only its own product. */
  readonly productId: ProductId | undefined
}

export type ProductChanges = Partial<
  Pick<Product, 'name' | 'suspendedAt' | 'clientTokenTtl' | 'signResponses' | 'branding' | 'metadata'>
> & {
  readonly updatedAt: Date
}

export interface ProductStore {
  /** Inserts the product and its first signing key together. */
  insert(product: Product, key: SigningKeyRecord): Promise<ProductView>
  findById(id: ProductId): Promise<ProductView | undefined>
  /** Just the product row (no signing key): what the hot paths (validate, activate) need. */
  findProductOnly(id: ProductId): Promise<Product | undefined>
  /**
   * `findProductOnly` with the caller's API key confirmed in the same statement
   * (config.confirmsApiKey): `api_key_gone` when the key is deleted.
   */
  findProductConfirming(
    id: ProductId,
    apiKeyId: ApiKeyId | undefined,
  ): Promise<Product | 'api_key_gone' | undefined>
  update(id: ProductId, changes: ProductChanges): Promise<ProductView | undefined>
  list(query: ProductListQuery): Promise<ListSlice<ProductView>>
}
