import type { ApiKeyId } from '@keyturn/protocol'
import type { IdempotencyRecord, StoredResponse } from './idempotency.js'

export interface NewClaim {
  readonly apiKeyId: ApiKeyId
  readonly key: string
  readonly requestHash: string
  readonly requestId: string
  readonly createdAt: Date
  /** The end of the claim's lease (idempotencyLeaseMs after createdAt). */
  readonly expiresAt: Date
}

export type ClaimOutcome =
  | { readonly kind: 'claimed' }
  /** A record that has not expired at `now` holds the key: the request's own, or another's. */
  | { readonly kind: 'held'; readonly record: IdempotencyRecord }
  /** The API key is gone (deleted since the request was authenticated): its records went with it. */
  | { readonly kind: 'api_key_gone' }

/**
 * Where idempotency records live. Shared by every Keyturn process on the database: the claim is a
 * row insert under a unique (API key, key), so of two concurrent requests exactly one claims it.
 */
export interface IdempotencyStore {
  /**
   * Claims the key, replacing a record that expired by `now`, unless that record's request committed
   * a change (events carry its request id: it crashed before storing its response); else returns the
   * record that holds it.
   */
  claim(claim: NewClaim, now: Date): Promise<ClaimOutcome>
  /** Hands the unanswered claim of request `previousRequestId` to `claim`'s request; false if it is gone. */
  takeOver(previousRequestId: string, claim: NewClaim): Promise<boolean>
  /** Stores the response of the claiming request; false if the claim was lost (its lease ran out and another took it). */
  complete(claim: NewClaim, response: StoredResponse, expiresAt: Date): Promise<boolean>
  /** Deletes the claim, so a retry runs the request again (after a server error). */
  release(claim: NewClaim): Promise<void>
  /**
   * Deletes answered records expired by `now`, and unanswered claims made before `unansweredBefore`
   * (a claim whose lease ran out may belong to a request that committed and lost its answer: it
   * stays as long as an answer would, so a late retry still recovers instead of running again).
   * Returns how many.
   */
  deleteExpired(now: Date, unansweredBefore: Date): Promise<number>
}
