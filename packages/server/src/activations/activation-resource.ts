import type { ActivationResource } from '@keyturn/protocol'
import type { Activation } from './activation.js'

/** The only converter from the domain's activation to the wire shape. */
export function toActivationResource(activation: Activation): ActivationResource {
  return {
    id: activation.id,
    object: 'Activation',
    licenseId: activation.licenseId,
    productId: activation.productId,
    fingerprint: activation.fingerprint,
    name: activation.name,
    metadata: activation.metadata === null ? null : { ...activation.metadata },
    createdAt: activation.createdAt.toISOString(),
    lastSeenAt: activation.lastSeenAt.toISOString(),
    lastHeartbeatAt: activation.lastHeartbeatAt.toISOString(),
    expiresAt: activation.expiresAt?.toISOString() ?? null,
  }
}
