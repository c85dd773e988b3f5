import type { ApiKeyId, ApiKeyRole, ProductId } from '@keyturn/protocol'

export interface ApiKey {
  readonly id: ApiKeyId
  readonly name: string
  readonly role: ApiKeyRole
  /** Set exactly for `product` and `client` keys. */
  readonly productId: ProductId | null
  /** HMAC-SHA256 of the secret; the secret itself is never stored. */
  readonly digest: string
  /** The first characters of the secret, to recognise it in a list. */
  readonly prefix: string
  readonly createdAt: Date
}

/** Readable secret prefixes (docs/decisions/0006-authentication-and-roles.md). */
export const secretPrefixes: Record<ApiKeyRole, string> = {
  admin: 'kt_admin_',
  product: 'kt_prod_',
  client: 'kt_client_',
}

/** How many characters of a secret the `prefix` field shows: the role prefix plus four. */
export function displayPrefix(secret: string, role: ApiKeyRole): string {
  return secret.slice(0, secretPrefixes[role].length + 4)
}
