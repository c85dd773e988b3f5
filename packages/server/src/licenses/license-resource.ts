import type { LicenseResource, ValidationResult } from '@keyturn/protocol'
import type { LicenseValidation, LicenseView } from './license.js'

/** The only converter from the domain's license to the wire shape. */
export function toLicenseResource({ license, state }: LicenseView): LicenseResource {
  return {
    id: license.id,
    object: 'License',
    key: license.key,
    maxActivations: license.maxActivations,
    status: state.status,
    expirationDate: license.expirationDate?.toISOString() ?? null,
    createdAt: license.createdAt.toISOString(),
    updatedAt: license.updatedAt.toISOString(),
    productId: license.productId,
    statusDetails: {
      isRevoked: state.isRevoked,
      isExpired: state.isExpired,
      determinedAt: state.determinedAt.toISOString(),
    },
    activationCount: license.activationCount,
    heartbeatTtl: license.heartbeatTtl,
    maxUses: license.maxUses,
    uses: license.uses,
    usesResetAt: license.usesResetAt?.toISOString() ?? null,
    customerId: license.customerId,
    policyId: license.policyId,
    entitlements: [...license.entitlements],
    metadata: license.metadata,
    externalId: license.externalId,
  }
}

export function toValidationResult(validation: LicenseValidation): ValidationResult {
  return {
    isValid: validation.isValid,
    reason: validation.reason,
    timestamp: validation.view.state.determinedAt.toISOString(),
    license: toLicenseResource(validation.view),
    ...validation.checkIn,
  }
}
