import type { PolicyResource } from '@keyturn/protocol'
import type { Policy } from './policy.js'

/** The only converter from the domain's policy to the wire shape. */
export function toPolicyResource(policy: Policy): PolicyResource {
  return {
    id: policy.id,
    object: 'Policy',
    productId: policy.productId,
    name: policy.name,
    maxActivations: policy.maxActivations,
    duration: policy.duration,
    expirationBasis: policy.expirationBasis,
    heartbeatTtl: policy.heartbeatTtl,
    maxUses: policy.maxUses,
    entitlements: [...policy.entitlements],
    metadata: policy.metadata,
    createdAt: policy.createdAt.toISOString(),
    updatedAt: policy.updatedAt.toISOString(),
    licenseFileTtl: policy.licenseFileTtl,
    tokenTtlMax: policy.tokenTtlMax,
    licenseFileMetadata: policy.licenseFileMetadata,
    maxTransfers: policy.maxTransfers,
    checkInInterval: policy.checkInInterval,
    gracePeriod: policy.gracePeriod,
    transferPeriod: policy.transferPeriod,
    seatsPerQuantity: policy.seatsPerQuantity,
  }
}
