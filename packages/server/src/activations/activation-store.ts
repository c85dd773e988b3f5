import type { ActivationId, LicenseId, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { Activation } from './activation.js'

export type ActivationSortField = 'createdAt' | 'lastSeenAt' | 'fingerprint'
export type ActivationFilterField = 'createdAt' | 'lastSeenAt' | 'fingerprint'

export const activationListSpec = {
  sortFields: ['createdAt', 'lastSeenAt', 'fingerprint'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<ActivationSortField>,
  filterFields: {
    createdAt: { type: 'timestamp' },
    lastSeenAt: { type: 'timestamp' },
    fingerprint: { type: 'string' },
  } satisfies FieldKinds<ActivationFilterField>,
} as const

export interface NewActivation {
  readonly id: ActivationId
  readonly licenseId: LicenseId
  readonly productId: ProductId
  readonly fingerprint: string
  readonly name: string | null
  readonly metadata: Readonly<Record<string, unknown>> | null
  readonly at: Date
}

export type ActivateOutcome =
  | { readonly kind: 'created'; readonly activation: Activation }
  /** The fingerprint was already activated: its lastSeenAt (and name/metadata, when given) are refreshed. */
  | { readonly kind: 'existing'; readonly activation: Activation }
  | { readonly kind: 'limit_reached'; readonly limit: number; readonly count: number }

export interface ActivationStore {
  /**
   * Activates a fingerprint atomically: the seat is taken by a guarded increment of the license's
   * counter in the same transaction as the insert, so concurrent callers never exceed the limit.
   */
  activate(activation: NewActivation): Promise<ActivateOutcome>
  /** Deletes the activation and frees its seat; undefined if it did not exist. */
  deactivate(id: ActivationId): Promise<Activation | undefined>
  findById(id: ActivationId): Promise<Activation | undefined>
  findByFingerprint(licenseId: LicenseId, fingerprint: string): Promise<Activation | undefined>
  list(
    licenseId: LicenseId,
    request: ListRequest<ActivationSortField, ActivationFilterField>,
  ): Promise<ListSlice<Activation>>
}
