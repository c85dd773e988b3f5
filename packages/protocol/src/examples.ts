/**
 * @module Values shared by the schemas' `examples` (the OpenAPI document shows them), so the
 * examples agree with one another: `exampleToken` verifies with `examplePublicKey`. Not exported
 * from the package: nothing but examples may use them.
 */

export const exampleTime = '2030-01-01T00:00:00.000Z'
export const exampleProductId = 'prd_3kTMd9qA8xYb2VnLr5sPwZ'
export const exampleLicenseId = 'lic_7fQx2mNc4RtYp9LkWv3bHs'

/** An Ed25519 public key (PEM, SPKI) whose private half was thrown away. */
export const examplePublicKey =
  '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAVG3HzDUMjrS/kDGErcvHcOGCnTe464+qkVGYhTq70P8=\n-----END PUBLIC KEY-----\n'
export const examplePublicKeyJwk = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: 'VG3HzDUMjrS_kDGErcvHcOGCnTe464-qkVGYhTq70P8',
  kid: 'OUFTS5hs6y_KWpwGEdBs5MfIilv_CpQ3pnsPcQvNjGs',
  alg: 'EdDSA',
  use: 'sig',
} as const
/** The RFC 7638 thumbprint of the key above. */
export const exampleKeyId = 'OUFTS5hs6y_KWpwGEdBs5MfIilv_CpQ3pnsPcQvNjGs'

/** A license token for the example license, signed by the example key, issued at `exampleTime` for 7 days. */
export const exampleToken =
  'eyJhbGciOiJFZERTQSIsInR5cCI6ImxpY2Vuc2Urand0Iiwia2lkIjoiT1VGVFM1aHM2eV9LV3B3R0VkQnM1TWZJaWx2X0NwUTNwbnNQY1F2TmpHcyJ9.eyJsaWNlbnNlSWQiOiJsaWNfN2ZReDJtTmM0UnRZcDlMa1d2M2JIcyIsImV4cGlyYXRpb25EYXRlIjoiMjAzMC0wMS0wOFQwMDowMDowMC4wMDBaIiwicHJvZHVjdElkIjoicHJkXzNrVE1kOXFBOHhZYjJWbkxyNXNQd1oiLCJjcmVhdGVkQXQiOiIyMDMwLTAxLTAxVDAwOjAwOjAwLjAwMFoiLCJjdXN0b21GaWVsZHMiOnsicGxhbiI6InBybyJ9LCJpc3MiOiJrZXl0dXJuIiwic3ViIjoibGljXzdmUXgybU5jNFJ0WXA5TGtXdjNiSHMiLCJhdWQiOiJwcmRfM2tUTWQ5cUE4eFliMlZuTHI1c1B3WiIsImlhdCI6MTg5MzQ1NjAwMCwibmJmIjoxODkzNDU2MDAwLCJleHAiOjE4OTQwNjA4MDAsImp0aSI6InRva185aFdxM1piSzduTHgyQ3ZUNW1ScDhkIn0.GtpgPsCTM58KLvwEgguQ8_V9Djd99yTsn0Gih1KFhsiHQKdSeG8HK_rSh59RBSIn07EWgPEmebbpE5HvJ6aMDQ'
export const exampleTokenPayload = {
  licenseId: exampleLicenseId,
  expirationDate: '2030-01-08T00:00:00.000Z',
  productId: exampleProductId,
  createdAt: exampleTime,
  customFields: { plan: 'pro' },
}

export const exampleLicense = {
  id: exampleLicenseId,
  object: 'License',
  key: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A',
  maxActivations: 3,
  status: 'active',
  expirationDate: '2031-01-01T00:00:00.000Z',
  createdAt: exampleTime,
  updatedAt: exampleTime,
  productId: exampleProductId,
  statusDetails: { isRevoked: false, isExpired: false, determinedAt: exampleTime },
  activationCount: 1,
  heartbeatTtl: null,
  maxUses: null,
  uses: 0,
  usesResetAt: null,
  customerId: 'cus_4nQw8ZkT2vLm6XcPb9RsJd',
  policyId: 'pol_8sKd2LqW5nXv3BzTm7YcRf',
  entitlements: ['cloud-sync', 'export-pdf'],
  metadata: { stripeSubscriptionId: 'sub_1QhZ8f2eZvKYlo2C' },
  externalId: null,
} as const

export const exampleCustomer = {
  id: 'cus_4nQw8ZkT2vLm6XcPb9RsJd',
  object: 'Customer',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  metadata: { stripeCustomerId: 'cus_Qh7Z2eZvKYlo2C' },
  mailOptOut: false,
  createdAt: exampleTime,
  updatedAt: exampleTime,
} as const

export const exampleEntitlement = {
  id: 'ent_2hGt6VpX9mQc4LwNs8KbZy',
  object: 'Entitlement',
  productId: exampleProductId,
  code: 'export-pdf',
  name: 'Export to PDF',
  createdAt: exampleTime,
  updatedAt: exampleTime,
} as const

export const examplePolicy = {
  id: 'pol_8sKd2LqW5nXv3BzTm7YcRf',
  object: 'Policy',
  productId: exampleProductId,
  name: 'Pro, yearly, 3 machines',
  maxActivations: 3,
  duration: 31_536_000,
  expirationBasis: 'creation',
  heartbeatTtl: null,
  maxUses: null,
  entitlements: ['export-pdf'],
  metadata: {},
  createdAt: exampleTime,
  updatedAt: exampleTime,
  licenseFileTtl: 31_536_000,
  tokenTtlMax: null,
  licenseFileMetadata: false,
  maxTransfers: 3,
  transferPeriod: 2_592_000,
  checkInInterval: 604_800,
  gracePeriod: 259_200,
  seatsPerQuantity: false,
} as const

export const exampleWebhookEndpoint = {
  id: 'whk_8sLq2NcVx5RtPm3KbY7wHd',
  object: 'WebhookEndpoint',
  url: 'https://billing.example.com/keyturn',
  description: 'Billing sync',
  eventTypes: ['license.*'],
  productId: null,
  enabled: true,
  createdAt: exampleTime,
  updatedAt: exampleTime,
} as const

export const exampleApiKey = {
  id: 'key_5bVn8cXz2LkJh4GfDs6aQw',
  object: 'ApiKey',
  name: 'Photo Editor back end',
  role: 'product',
  productId: exampleProductId,
  prefix: 'kt_prod_4fGh',
  createdAt: exampleTime,
} as const

/** A product's current signing key, as the API shows it. */
export const exampleProductKey = {
  object: 'ProductKey',
  keyId: exampleKeyId,
  productId: exampleProductId,
  publicKey: examplePublicKey,
  publicKeyJwk: examplePublicKeyJwk,
  isCurrent: true,
  createdAt: exampleTime,
  retiredAt: null,
} as const
