/**
 * @module Who is signed in: an operator (a person), by the httpOnly session cookie the server set at
 * sign-in. The page never holds a secret: it keeps only the session's CSRF token in memory, sent
 * by @keyturn/client (cookie mode) with every write, and learns it again from `GET /operator/me`
 * after a reload. What the operator's role allows decides which controls are offered; the API
 * enforces the same roles.
 */
import { KeyturnApiError, KeyturnClient, type OperatorResource, type Problem } from '@keyturn/client'
import { createContext, type ReactNode, useContext } from 'react'

export interface Access {
  readonly operator: OperatorResource
}

export interface Session {
  readonly client: KeyturnClient
  readonly access: Access
  /** For the sign-in routes' writes (`/operator/…`), which the client does not cover. */
  readonly csrfToken: string
  signOut(): void
}

/** A signed-in operator as `/operator/me` and the sign-in routes answer it. */
export interface SignedIn {
  readonly operator: OperatorResource
  readonly csrfToken: string
}

export function clientFor(signedIn: SignedIn): KeyturnClient {
  // Same origin only: the page's CSP allows no other (connect-src 'self').
  return new KeyturnClient({
    baseUrl: window.location.origin,
    operatorSession: { csrfToken: signedIn.csrfToken },
  })
}

/**
 * A request to the sign-in routes (`/operator/…`, outside the API): JSON in, JSON out, a problem
 * thrown as `KeyturnApiError` so forms show it like any other.
 */
export async function operatorRequest<T>(
  path: string,
  init: { readonly body?: unknown; readonly csrfToken?: string; readonly method?: 'DELETE' } = {},
): Promise<T> {
  const response = await fetch(`/operator${path}`, {
    method: init.method ?? (init.body === undefined && init.csrfToken === undefined ? 'GET' : 'POST'),
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.csrfToken === undefined ? {} : { 'x-keyturn-csrf': init.csrfToken }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  })
  if (!response.ok) {
    throw new KeyturnApiError((await response.json()) as Problem)
  }
  // 204, and 202 (a request taken, such as a reset link asked for), carry no body.
  return (response.status === 204 || response.status === 202 ? undefined : await response.json()) as T
}

/** The operator of this browser's session, or undefined when no one is signed in. */
export async function currentOperator(): Promise<SignedIn | undefined> {
  try {
    return await operatorRequest<SignedIn>('/me')
  } catch (error) {
    if (error instanceof KeyturnApiError && error.status === 401) {
      return undefined
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

const ascending = ['viewer', 'support', 'admin', 'owner'] as const

/**
 * Whether the signed-in operator's role is at least `role`: `support` revokes, reinstates,
 * deactivates machines and sends portal links; `admin` creates, changes and deletes; `owner`
 * manages operators. Controls a role may not use are not offered.
 */
export function may(session: Session, role: 'support' | 'admin' | 'owner'): boolean {
  return ascending.indexOf(session.access.operator.role) >= ascending.indexOf(role)
}

/** Whether the signed-in operator may change things (create, update, delete): admins and owners. */
export function isAdmin(session: Session): boolean {
  return may(session, 'admin')
}

/** Renders `children` only for an operator whose role is at least `role`. */
export function Allowed({ least, children }: { least: 'support' | 'admin' | 'owner'; children: ReactNode }) {
  return may(useSession(), least) ? children : null
}
