import type { ApiKeyId, ProductId } from '@keyturn/protocol'
import type { OperatorRole } from '../operators/operator.js'
import { DomainError } from './errors.js'

/** A person signed in to the dashboard, calling the API with the operator session cookie. */
export interface OperatorCaller {
  readonly id: string
  readonly role: OperatorRole
}

/**
 * Who is calling, and in which request: set by authentication, passed explicitly to every service
 * method (the request context; no AsyncLocalStorage). `requestId` goes into the events a change
 * records; it is absent when a service is called outside a request (tests, bootstrap).
 *
 * An API key has `apiKeyId`; a signed-in operator has `operator` instead and the scope of an admin
 * key (every product): what its operator role allows is decided before the route runs
 * (operators/operator-permissions.ts), so services see an admin.
 */
export type Principal = ApiKeyPrincipal | OperatorPrincipal

export type AdminKeyPrincipal = {
  readonly role: 'admin'
  readonly apiKeyId: ApiKeyId
  readonly operator?: undefined
  readonly requestId?: string
}

export type ApiKeyPrincipal =
  | AdminKeyPrincipal
  | {
      readonly role: 'product' | 'client'
      readonly apiKeyId: ApiKeyId
      readonly productId: ProductId
      readonly operator?: undefined
      readonly requestId?: string
    }

export type OperatorPrincipal = {
  readonly role: 'admin'
  readonly apiKeyId?: undefined
  readonly operator: OperatorCaller
  readonly requestId?: string
}

/** Another product's data is invisible to a product key: callers treat it as not found. */
export function canSeeProduct(principal: Principal, productId: ProductId): boolean {
  return principal.role === 'admin' || principal.productId === productId
}

/** The product a principal is limited to, or undefined for an admin. */
export function scopedProductId(principal: Principal): ProductId | undefined {
  return principal.role === 'admin' ? undefined : principal.productId
}

/**
 * Client keys are embedded in applications shipped to users, so anyone may extract one: they may
 * only validate, activate, deactivate and obtain tokens for a license whose key they present.
 * Every other operation calls this first.
 */
export function requireManagementKey(principal: Principal): void {
  if (principal.role === 'client') {
    throw new DomainError(
      'forbidden',
      'A client API key may only validate, activate, deactivate and obtain tokens by license key.',
    )
  }
}

export function requireAdmin(principal: Principal, action: string): void {
  if (principal.role !== 'admin') {
    throw new DomainError('forbidden', `Only an admin API key may ${action}.`)
  }
}

export const apiKeyNotValid = 'The API key is not valid; it may have been deleted.'

/** A 401, from a service whose statement found the caller's API key gone (config.confirmsApiKey). */
export function apiKeyGone(): DomainError {
  return new DomainError('unauthenticated', apiKeyNotValid)
}
