/**
 * @module Who is signed in: the API key (kept in sessionStorage only, sent only as the Bearer header
 * by @keyturn/client) and what the API lets it do, learnt by asking the API, never guessed from the key.
 */
import { KeyturnApiError, KeyturnClient } from '@keyturn/client'
import { createContext, useContext } from 'react'

/** admin: everything; product: one product's licenses, read-only products, no API keys. */
export type Access = { readonly role: 'admin' } | { readonly role: 'product'; readonly productId: string }

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
 * Asks the API what the key may do: any key that manages licenses may list products; only an admin
 * key may list API keys. A client key (embedded in applications) cannot use the dashboard.
 */
export async function discoverAccess(client: KeyturnClient): Promise<Access> {
  const products = await client.listProducts({ limit: 1 })
  try {
    await client.listApiKeys({ limit: 1 })
    return { role: 'admin' }
  } catch (error) {
    if (error instanceof KeyturnApiError && error.code === 'forbidden') {
      const product = products.data[0]
      if (product === undefined) {
        throw new Error('This key sees no product.')
      }
      return { role: 'product', productId: product.id }
    }
    throw error
  }
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
