import type { ApiKeyId, ProductId } from '@keyturn/protocol'

/** What other features need to know about a product; app.ts wires the products service in (CONTRIBUTING.md, "Module boundaries"). */
export interface ProductLookup {
  findProduct(id: ProductId): Promise<ProductFacts | undefined>
  /**
   * `findProduct` with the caller's API key confirmed in the same statement, for a route whose
   * authentication recalled the key (config.confirmsApiKey): `api_key_gone` when it is deleted.
   */
  findProductConfirming(
    id: ProductId,
    apiKeyId: ApiKeyId | undefined,
  ): Promise<ProductFacts | 'api_key_gone' | undefined>
}

export interface ProductFacts {
  readonly id: ProductId
  readonly isSuspended: boolean
  /** Seconds: the longest token a client key obtains for the product. */
  readonly clientTokenTtl: number
  /** Its application-facing answers are always signed (protection/). */
  readonly signResponses: boolean
}
