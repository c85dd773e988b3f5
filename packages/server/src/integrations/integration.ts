import type {
  IntegrationId,
  IntegrationMapping,
  IntegrationProvider,
  IntegrationResource,
  PolicyId,
  ProductId,
} from '@keyturn/protocol'
import { InvalidInputError } from '../core/errors.js'

/** A payment-provider integration as the server keeps it (the secret stays encrypted in storage). */
export interface Integration {
  readonly id: IntegrationId
  readonly provider: IntegrationProvider
  readonly description: string | null
  readonly mappings: readonly IntegrationMapping[]
  readonly onRefund: 'revoke' | 'none'
  readonly paymentGraceDays: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** The refund rule and grace when a create request leaves them out. */
export const integrationDefaults = { onRefund: 'revoke', paymentGraceDays: 7 } as const

/** The path the provider posts to; the receiver needs no API key. */
export function webhookPathOf(id: IntegrationId): string {
  return `/api/v0/integrations/${id}/webhook`
}

export function toIntegrationResource(integration: Integration): IntegrationResource {
  return {
    id: integration.id,
    object: 'Integration',
    provider: integration.provider,
    description: integration.description,
    mappings: integration.mappings.map((m) => ({ ...m })),
    onRefund: integration.onRefund,
    paymentGraceDays: integration.paymentGraceDays,
    webhookPath: webhookPathOf(integration.id),
    createdAt: integration.createdAt.toISOString(),
    updatedAt: integration.updatedAt.toISOString(),
  }
}

/** An item id may be mapped once: the receiver must know which policy a purchase is for. */
export function checkMappingsUnique(mappings: readonly IntegrationMapping[]): void {
  const seen = new Set<string>()
  mappings.forEach((mapping, index) => {
    if (seen.has(mapping.providerItemId)) {
      throw new InvalidInputError(
        `#/mappings/${index}/providerItemId`,
        `Provider item ${mapping.providerItemId} is mapped twice.`,
      )
    }
    seen.add(mapping.providerItemId)
  })
}

/** A quantity a payload states (a number, or a numeric string in metadata): 1 to 10,000, else undefined. */
export function quantityOf(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : value
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 10_000 ? n : undefined
}

/** The mapping of a provider item, if any. */
export function mappingFor(
  integration: Integration,
  providerItemId: string,
): { readonly productId: ProductId; readonly policyId: PolicyId } | undefined {
  return integration.mappings.find((m) => m.providerItemId === providerItemId)
}
