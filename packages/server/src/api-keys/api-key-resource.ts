import type { ApiKeyResource, CreatedApiKeyResource } from '@keyturn/protocol'
import type { ApiKey } from './api-key.js'

/** The only converter from the domain's API key to the wire shape; the digest never leaves. */
export function toApiKeyResource(apiKey: ApiKey): ApiKeyResource {
  return {
    id: apiKey.id,
    object: 'ApiKey',
    name: apiKey.name,
    role: apiKey.role,
    productId: apiKey.productId,
    prefix: apiKey.prefix,
    createdAt: apiKey.createdAt.toISOString(),
  }
}

export function toCreatedApiKeyResource(created: { apiKey: ApiKey; secret: string }): CreatedApiKeyResource {
  return { ...toApiKeyResource(created.apiKey), secret: created.secret }
}
