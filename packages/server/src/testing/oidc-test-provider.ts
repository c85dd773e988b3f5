import { generateKeyPairSync } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer, request as httpsRequest } from 'node:https'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'
import { generate } from 'selfsigned'

/** The claims of whoever "signs in" at the test provider next. */
export interface TestIdentity {
  readonly sub: string
  readonly email: string
  readonly email_verified: boolean
  readonly name?: string
}

export interface OidcTestProvider {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** The test's certificate authority (PEM), for NODE_EXTRA_CA_CERTS of a spawned server. */
  readonly caCertificate: string
  /** A fetch trusting only the test's certificate authority (what Keyturn's OIDC client is given). */
  readonly fetch: (
    url: string,
    options: { method?: string; headers?: unknown; body?: unknown },
  ) => Promise<Response>
  /** Who signs in at the provider's login step from now on. */
  signInAs(identity: TestIdentity): void
  /**
   * Follows the provider's redirects from an authorization URL, as a browser would (its own cookie
   * jar for the provider), signing in as the current identity; returns the URL it was sent back to.
   */
  authorize(url: string): Promise<string>
  close(): Promise<void>
}

/**
 * A real OpenID Connect provider (`oidc-provider`, the certified implementation) on loopback over
 * HTTPS, with a certificate authority and a server certificate made for the test. The login step is
 * answered by the test (no HTML forms); consent is granted to the one client.
 */
export async function startOidcTestProvider(redirectUri: string): Promise<OidcTestProvider> {
  const now = new Date()
  const notAfterDate = new Date(now.getTime() + 24 * 60 * 60_000)
  const ca = await generate([{ name: 'commonName', value: 'Keyturn test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  })
  const server = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  })

  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end()
  const https = createServer({ key: server.private, cert: server.cert }, (req, res) => handler(req, res))
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve))
  const issuer = `https://127.0.0.1:${(https.address() as AddressInfo).port}`

  let identity: TestIdentity | undefined
  const clientId = 'keyturn-test'
  const clientSecret = 'keyturn-test-client-secret-0123456789'
  const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: [{ ...signingKey, kid: 'test', alg: 'ES256', use: 'sig' }] },
    claims: { email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['test-provider-cookie-key-0123456789'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const who = identity
      return who === undefined || who.sub !== sub ? undefined : { accountId: sub, claims: () => ({ ...who }) }
    },
    loadExistingGrant: async (ctx) => {
      const accountId = ctx.oidc.session?.accountId
      const client = ctx.oidc.client
      if (accountId === undefined || client === undefined) {
        return undefined
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId })
      grant.addOIDCScope('openid email profile')
      await grant.save()
      return grant
    },
  })
  const callback = provider.callback()
  handler = (req, res) => {
    if (req.url?.startsWith('/interaction/') === true) {
      const who = identity
      provider
        .interactionFinished(req, res, { login: { accountId: who?.sub ?? 'nobody' } })
        .catch((error: unknown) => {
          res.statusCode = 500
          res.end(String(error))
        })
      return
    }
    callback(req, res)
  }

  const fetchTrusting: OidcTestProvider['fetch'] = (url, options) =>
    new Promise((resolve, reject) => {
      const headers = Object.fromEntries(
        new Headers(options.headers as ConstructorParameters<typeof Headers>[0]),
      )
      const req = httpsRequest(url, { method: options.method ?? 'GET', headers, ca: ca.cert }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const responseHeaders = new Headers()
          for (const [name, value] of Object.entries(res.headers)) {
            for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
              responseHeaders.append(name, one)
            }
          }
          const status = res.statusCode ?? 500
          resolve(
            new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), {
              status,
              headers: responseHeaders,
            }),
          )
        })
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(options.body === undefined || options.body === null ? undefined : String(options.body))
    })

  return {
    issuer,
    clientId,
    clientSecret,
    caCertificate: ca.cert,
    fetch: fetchTrusting,
    signInAs(next) {
      identity = next
    },
    async authorize(url) {
      const jar = new Map<string, string>()
      let next = url
      for (let hop = 0; hop < 10; hop++) {
        if (!next.startsWith(issuer)) {
          return next
        }
        const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
        const res = await fetchTrusting(next, { headers: cookie === '' ? {} : { cookie } })
        for (const line of res.headers.getSetCookie()) {
          const pair = line.split(';')[0] ?? ''
          const at = pair.indexOf('=')
          jar.set(pair.slice(0, at), pair.slice(at + 1))
        }
        const location = res.headers.get('location')
        if (location === null) {
          throw new Error(`The provider answered ${res.status} without a redirect: ${await res.text()}`)
        }
        next = new URL(location, next).href
      }
      throw new Error('Too many redirects at the test provider')
    },
    close: () =>
      new Promise<void>((resolve) => {
        https.closeAllConnections()
        https.close(() => resolve())
      }),
  }
}
