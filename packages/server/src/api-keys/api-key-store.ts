import type { ApiKeyId, ApiKeyRole } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { ApiKey } from './api-key.js'

export type ApiKeySortField = 'createdAt' | 'name'
export type ApiKeyFilterField = 'role' | 'productId' | 'createdAt'

const roles: readonly ApiKeyRole[] = ['admin', 'product']

export const apiKeyListSpec = {
  sortFields: ['createdAt', 'name'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<ApiKeySortField>,
  filterFields: {
    role: { type: 'enum', values: roles },
    productId: { type: 'string' },
    createdAt: { type: 'timestamp' },
  } satisfies FieldKinds<ApiKeyFilterField>,
} as const

export interface ApiKeyStore {
  insert(apiKey: ApiKey): Promise<void>
  findById(id: ApiKeyId): Promise<ApiKey | undefined>
  findByDigest(digest: string): Promise<ApiKey | undefined>
  /** True when a key was deleted. */
  delete(id: ApiKeyId): Promise<boolean>
  list(request: ListRequest<ApiKeySortField, ApiKeyFilterField>): Promise<ListSlice<ApiKey>>
  hasAdminKey(): Promise<boolean>
  /**
   * Inserts the key unless the condition already holds, atomically across processes that start at
   * once: `digest` (a key with the same secret exists) or `anyAdmin` (some admin key exists).
   * True when it inserted.
   */
  insertUnless(apiKey: ApiKey, condition: 'digest' | 'anyAdmin'): Promise<boolean>
}
