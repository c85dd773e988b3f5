import type { App } from '../../http/app-types.js'
import type { ApiKeyService } from '../api-key-service.js'
import { registerCreateApiKey } from './create-api-key.js'
import { registerDeleteApiKey } from './delete-api-key.js'
import { registerGetApiKey } from './get-api-key.js'
import { registerGetCurrentApiKey } from './get-current-api-key.js'
import { registerListApiKeys } from './list-api-keys.js'

/** Every route of the api keys feature, on the API scope (under /api/v0, behind authentication). */
export function registerApiKeysRoutes(api: App, apiKeys: ApiKeyService): void {
  registerListApiKeys(api, apiKeys)
  registerCreateApiKey(api, apiKeys)
  registerGetCurrentApiKey(api, apiKeys)
  registerGetApiKey(api, apiKeys)
  registerDeleteApiKey(api, apiKeys)
}
