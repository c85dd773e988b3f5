import { randomBytes } from 'node:crypto'
import { buildApp } from '../app.js'
import { systemClock } from '../core/clock.js'
import { deriveSecretKeys } from '../core/secrets.js'
import type { OidcSettings } from '../operators/oidc.js'
import { connect } from '../storage/connect.js'

/**
 * Placeholders, never contacted: the single sign-on routes exist only with a provider set, and the
 * document lists them (each says so).
 */
export const documentedOidc: OidcSettings = {
  issuer: 'https://sso.example.com',
  clientId: 'keyturn',
  clientSecret: 'unused',
  domains: ['example.com'],
  role: 'viewer',
  redirectUri: 'https://licenses.example.com/operator/oidc/callback',
}

/**
 * The OpenAPI 3.1 document exactly as `packages/protocol/openapi.json` holds it (pretty, stable key
 * order, final newline): what `GET /openapi.json` serves (a server without single sign-on lists no
 * /operator/oidc routes). Builds the app on an unused in-memory database; nothing is read or written.
 */
export async function openApiJson(): Promise<string> {
  const connection = connect({ kind: 'sqlite', path: ':memory:' })
  const { app } = buildApp({
    db: connection.db,
    clock: systemClock,
    secretKeys: deriveSecretKeys(randomBytes(32).toString('base64url')),
    logger: false,
    oidc: documentedOidc,
  })
  try {
    await app.ready()
    return `${JSON.stringify(app.swagger(), null, 2)}\n`
  } finally {
    await app.close()
    await connection.close()
  }
}
