import { randomUUID } from 'node:crypto'
import * as client from 'openid-client'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { decryptText, encryptText } from '../core/secrets.js'
import type { SessionService, StartedSession } from '../sessions/session-service.js'
import type { FactorStore } from './factor-store.js'
import type { Operator, OperatorRole } from './operator.js'
import { operatorActor, toOperatorResource } from './operator-resource.js'
import {
  type OperatorEventLog,
  type OperatorStore,
  publicOperator,
  type StoredOperator,
} from './operator-store.js'

/** Single sign-on with an OpenID Connect provider (KEYTURN_OIDC_*). */
export interface OidcSettings {
  /** The provider's issuer URL; its discovery document is read from `/.well-known/openid-configuration` under it. */
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** Email domains (lower case) whose verified addresses get an account on their first sign-in. */
  readonly domains: readonly string[]
  /** The role of an account made on a first sign-in. */
  readonly role: Exclude<OperatorRole, 'owner'>
  /** Where the provider sends the browser back: KEYTURN_PUBLIC_URL + /operator/oidc/callback. */
  readonly redirectUri: string
  /** The HTTP client for the provider (a test trusts its own certificate authority through it). */
  readonly fetch?: client.CustomFetch
}

/** How long a browser has between leaving for the provider and coming back. */
export const oidcRequestMs = 10 * 60_000

interface RequestState {
  readonly state: string
  readonly nonce: string
  readonly verifier: string
  readonly expiresAt: number
}

const stateContext = 'operator-oidc-request'
const maxStateCookieLength = 2000

/** What an operator is known by: the ID token's issuer and subject; the profile's address and name. */
interface Claims {
  readonly iss: string
  readonly sub: string
  readonly email: unknown
  readonly email_verified: unknown
  readonly name: unknown
}

function refused(detail: string): DomainError {
  return new DomainError('sso_refused', detail)
}

/**
 * The authorization code flow with PKCE, state and nonce (openid-client). The state, nonce and code
 * verifier travel in a short-lived cookie encrypted with a key derived from the server's secret, so
 * the callback is accepted only in the browser that started it. Identities are linked to operators
 * by the provider's issuer and subject, never by email: a first sign-in creates an account only for
 * a verified address of an allowed domain, and never takes over an existing account with the same
 * address.
 */
export class OidcService {
  readonly #settings: OidcSettings
  readonly #factors: FactorStore
  readonly #operators: OperatorStore
  readonly #sessions: SessionService
  readonly #clock: Clock
  readonly #stateKey: Buffer
  readonly #events: OperatorEventLog
  #configuration: Promise<client.Configuration> | undefined

  constructor(options: {
    settings: OidcSettings
    factors: FactorStore
    operators: OperatorStore
    sessions: SessionService
    clock: Clock
    stateKey: Buffer
    /** Where accounts made at a first sign-on are recorded. */
    events: OperatorEventLog
  }) {
    this.#settings = options.settings
    this.#factors = options.factors
    this.#operators = options.operators
    this.#sessions = options.sessions
    this.#clock = options.clock
    this.#stateKey = options.stateKey
    this.#events = options.events
  }

  /** Where the provider sends the browser back (registered with the provider). */
  get redirectUri(): string {
    return this.#settings.redirectUri
  }

  /** The provider's address to send the browser to, and the cookie value that must come back with it. */
  async start(): Promise<{ readonly url: string; readonly stateCookie: string }> {
    const configuration = await this.#discover()
    const request: RequestState = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      expiresAt: this.#clock.now().getTime() + oidcRequestMs,
    }
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.#settings.redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      state: request.state,
      nonce: request.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(request.verifier),
      code_challenge_method: 'S256',
    })
    return {
      url: url.href,
      stateCookie: encryptText(this.#stateKey, JSON.stringify(request), stateContext),
    }
  }

  /**
   * The provider's answer at the callback: checks state, PKCE and the ID token (signature, issuer,
   * audience, nonce), then finds the linked operator or makes one; a session for it.
   */
  async finish(
    callbackUrl: URL,
    stateCookie: string | undefined,
  ): Promise<{ readonly operator: Operator; readonly started: StartedSession; readonly created: boolean }> {
    const request = this.#readState(stateCookie)
    const configuration = await this.#discover()
    let claims: Claims | undefined
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
        idTokenExpected: true,
      })
      const idToken = tokens.claims()
      if (idToken !== undefined) {
        // Many providers put the address in the ID token; others only at the userinfo endpoint.
        const profile =
          typeof idToken['email'] === 'string'
            ? idToken
            : await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub)
        claims = {
          iss: idToken.iss,
          sub: idToken.sub,
          email: profile['email'],
          email_verified: profile['email_verified'],
          name: profile['name'],
        }
      }
    } catch (error) {
      throw new DomainError(
        'unauthenticated',
        'The sign-in with the identity provider failed (state, code or ID token not accepted): start again.',
        { cause: error },
      )
    }
    if (claims === undefined) {
      throw new DomainError('unauthenticated', 'The identity provider sent no ID token.')
    }
    const { operator, created } = await this.#operatorFor(claims)
    return { operator, created, started: await this.#sessions.start('operator', operator.id) }
  }

  async #operatorFor(claims: Claims): Promise<{ operator: Operator; created: boolean }> {
    const linked = await this.#factors.findIdentity(claims.iss, claims.sub)
    if (linked !== undefined) {
      const operator = await this.#operators.findById(linked.operatorId)
      if (operator?.status !== 'active') {
        throw refused('This operator account is disabled.')
      }
      return { operator: publicOperator(operator), created: false }
    }
    const email = typeof claims.email === 'string' ? claims.email.trim() : ''
    if (claims.email_verified !== true) {
      throw refused('The identity provider has not verified this email address: no account is made for it.')
    }
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
    if (!email.includes('@') || !this.#settings.domains.includes(domain)) {
      throw refused(`Accounts are made only for addresses of ${this.#settings.domains.join(', ')}.`)
    }
    if ((await this.#operators.findByEmail(email)) !== undefined) {
      throw refused(
        'An operator account with this email exists already and is not linked to this identity: sign in with its password.',
      )
    }
    const now = this.#clock.now()
    const name = typeof claims.name === 'string' && claims.name.trim() !== '' ? claims.name.trim() : email
    const operator: StoredOperator = {
      id: newId('operator', now.getTime()),
      email,
      name: name.slice(0, 200),
      role: this.#settings.role,
      status: 'active',
      passwordHash: undefined,
      createdAt: now,
      updatedAt: now,
    }
    await this.#operators.insert(operator)
    await this.#factors.insertIdentity({
      id: randomUUID(),
      operatorId: operator.id,
      issuer: claims.iss,
      subject: claims.sub,
      email,
      createdAt: now,
    })
    const created = publicOperator(operator)
    await this.#events.recordAlone(operatorActor(created), 'operator.sso_account_created', null, {
      ...toOperatorResource(created),
      issuer: claims.iss,
    })
    return { operator: created, created: true }
  }

  #readState(stateCookie: string | undefined): RequestState {
    let request: RequestState | undefined
    if (stateCookie !== undefined && stateCookie.length <= maxStateCookieLength) {
      try {
        request = JSON.parse(decryptText(this.#stateKey, stateCookie, stateContext)) as RequestState
      } catch {
        request = undefined
      }
    }
    if (request === undefined || request.expiresAt <= this.#clock.now().getTime()) {
      throw new DomainError(
        'unauthenticated',
        'This sign-in was not started in this browser, or it took too long: start again.',
      )
    }
    return request
  }

  /** The provider's metadata, read once (again after a failure). */
  #discover(): Promise<client.Configuration> {
    if (this.#configuration === undefined) {
      const settings = this.#settings
      this.#configuration = client
        .discovery(
          new URL(settings.issuer),
          settings.clientId,
          { redirect_uris: [settings.redirectUri], response_types: ['code'] },
          client.ClientSecretPost(settings.clientSecret),
          settings.fetch === undefined ? {} : { [client.customFetch]: settings.fetch },
        )
        .catch((error: unknown) => {
          this.#configuration = undefined
          throw new DomainError('service_unavailable', 'The identity provider cannot be reached.', {
            cause: error,
          })
        })
    }
    return this.#configuration
  }
}
