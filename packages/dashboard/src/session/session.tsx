/**
 * @module Who is signed in: the API key (kept in sessionStorage only, sent only as the Bearer header
 * by @keyturn/client) and what the API lets it do, learnt by asking the API, never guessed from the key.
 */
import { KeyturnClient } from '@keyturn/client'
import { createContext, useContext } from 'react'

/**
 * admin: everything; product: one product's licenses, read-only products, no API keys. `apiKeyId`:
 * the key signed in with, which the API keys screen does not offer to delete (the API refuses it).
 */
export type Access =
  | { readonly role: 'admin'; readonly apiKeyId: string }
  | { readonly role: 'product'; readonly apiKeyId: string; readonly productId: string }

export interface Session {
  readonly client: KeyturnClient
  readonly access: Access
  signOut(): void
}

const storageKey = 'keyturn.dashboard.apiKey'

export function storedApiKey(): string | undefined {
  return sessionStorage.getItem(storageKey) ?? undefined
}

export function storeApiKey(apiKey: string): void {
  sessionStorage.setItem(storageKey, apiKey)
}

export function forgetApiKey(): void {
  sessionStorage.removeItem(storageKey)
}

export function clientFor(apiKey: string): KeyturnClient {
  // Same origin only: the page's CSP allows no other (connect-src 'self').
  return new KeyturnClient({ baseUrl: window.location.origin, apiKey })
}

/**
 * Asks the API which key this is (`GET /api-keys/current`): its role, product and id, in one request
 * that no management key is refused. A client key (embedded in applications) is refused there, and
 * so cannot use the dashboard.
 */
export async function discoverAccess(client: KeyturnClient): Promise<Access> {
  const apiKey = await client.getCurrentApiKey()
  if (apiKey.role === 'admin') {
    return { role: 'admin', apiKeyId: apiKey.id }
  }
  if (apiKey.role === 'product' && apiKey.productId !== null) {
    return { role: 'product', apiKeyId: apiKey.id, productId: apiKey.productId }
  }
  throw new Error('A client key cannot sign in to the dashboard: use an admin or a product key.')
}

export const SessionContext = createContext<Session | undefined>(undefined)

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (session === undefined) {
    throw new Error('useSession outside a signed-in view')
  }
  return session
}

export function isAdmin(session: Session): boolean {
  return session.access.role === 'admin'
}
