import { type Static, Type } from 'typebox'
import { Check, Clean, Convert, Default, Errors } from 'typebox/value'
import { type DatabaseLocation, parseDatabaseUrl } from './storage/connect.js'

/** Every environment variable Keyturn reads (docs/operations/configuration.md), declared once. */
const EnvSchema = Type.Object({
  // 0 lets the operating system pick a free port (tests, one-off runs).
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  KEYTURN_DATABASE_URL: Type.String({ minLength: 1, default: 'sqlite:./data/keyturn.db' }),
  // Off behind a connection pooler that cannot keep prepared statements (PgBouncer < 1.21 in
  // transaction mode): docs/operations/postgresql.md.
  KEYTURN_POSTGRES_PREPARED_STATEMENTS: Type.Boolean({ default: true }),
  // The longest a request waits for a database connection, and the longest a statement may run.
  KEYTURN_DATABASE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5000 }),
  KEYTURN_ADMIN_KEY: Type.Optional(Type.String({ minLength: 32, maxLength: 256 })),
  KEYTURN_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  KEYTURN_RECORD_VALIDATIONS: Type.Boolean({ default: false }),
  KEYTURN_EVENT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 90 }),
  KEYTURN_WEBHOOK_ALLOW_HTTP: Type.Boolean({ default: false }),
  KEYTURN_WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  KEYTURN_WEBHOOK_LEASE_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  // Outbound mail (docs/guides/mail.md): off while KEYTURN_SMTP_URL is unset.
  KEYTURN_SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://', maxLength: 2000 })),
  KEYTURN_MAIL_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 500 })),
  KEYTURN_MAIL_TEMPLATES: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  // Days before a license's expiry with a `license.expiring_soon` notice (expiry-notices/).
  KEYTURN_EXPIRY_NOTICE_DAYS: Type.String({
    pattern: '^\\s*\\d{1,4}\\s*(,\\s*\\d{1,4}\\s*){0,9}$',
    default: '14,3',
  }),
  // The absolute URL people reach this server at (links in mails); default http://HOST:PORT.
  KEYTURN_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2000 })),
  // The customer portal at /portal (docs/guides/portal.md); off: /portal answers 404.
  KEYTURN_PORTAL: Type.Boolean({ default: false }),
  // Single sign-on for operators (docs/guides/team-access.md): off while KEYTURN_OIDC_ISSUER is unset.
  KEYTURN_OIDC_ISSUER: Type.Optional(Type.String({ pattern: '^https://[^\\s]+$', maxLength: 2000 })),
  KEYTURN_OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  KEYTURN_OIDC_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
  KEYTURN_OIDC_DOMAINS: Type.Optional(
    Type.String({
      pattern: '^\\s*[A-Za-z0-9.-]+\\.[A-Za-z]{2,}\\s*(,\\s*[A-Za-z0-9.-]+\\.[A-Za-z]{2,}\\s*)*$',
      maxLength: 2000,
    }),
  ),
  KEYTURN_OIDC_ROLE: Type.Enum(['admin', 'support', 'viewer'], { default: 'viewer' }),
  // Abuse protection (docs/guides/protection.md); 0 turns a limit off.
  KEYTURN_RATE_LIMIT_KEY_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 6000 }),
  KEYTURN_RATE_LIMIT_IP_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 300 }),
  KEYTURN_GUESS_LIMIT: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 20 }),
  KEYTURN_GUESS_BLOCK_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400 * 30, default: 900 }),
  KEYTURN_REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  KEYTURN_TRUST_PROXY: Type.String({ minLength: 1, maxLength: 1000, default: 'false' }),
  KEYTURN_CORS_ORIGINS: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })),
  // V8's heap (docs/operations/production.md, entry/heap-flags.ts); 0 leaves the choice to V8.
  KEYTURN_HEAP_SEMI_SPACE_MB: Type.Integer({ minimum: 0, maximum: 64, default: 4 }),
  KEYTURN_HEAP_GROWTH_PERCENT: Type.Integer({ minimum: 0, maximum: 1000, default: 100 }),
})
type Env = Static<typeof EnvSchema>

/** The names of the variables loadConfig reads, in the order docs/operations/configuration.md lists them. */
export const environmentVariables = Object.keys(EnvSchema.properties) as readonly (keyof Env)[]

export interface OidcConfig {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** Lower-cased email domains whose verified addresses get an account on a first sign-in. */
  readonly domains: readonly string[]
  /** The role of such an account. */
  readonly role: 'admin' | 'support' | 'viewer'
}

export interface Config {
  readonly port: number
  readonly host: string
  readonly database: DatabaseLocation
  /**
   * PostgreSQL: the longest a request waits for a pooled connection and the longest a statement
   * runs; past it the request answers 503 `database_unavailable` instead of hanging.
   */
  readonly databaseTimeoutMs: number
  readonly adminKey: string | undefined
  readonly secret: string | undefined
  readonly logLevel: Env['LOG_LEVEL']
  /** Record every validation outcome as an event, not only while an endpoint subscribes. */
  readonly recordValidations: boolean
  readonly eventRetentionDays: number
  /** Webhook URLs may be http:// (local development, tests). */
  readonly webhookAllowHttp: boolean
  /** Webhook URLs may resolve to loopback, private, link-local or metadata addresses. */
  readonly webhookAllowPrivate: boolean
  /**
   * How long a process holds a claimed webhook delivery before another may send it again (after a
   * crash); longer than an attempt (10 s) can take.
   */
  readonly webhookLeaseSeconds: number
  /** Outbound mail; undefined while KEYTURN_SMTP_URL is unset (no mail is queued). */
  readonly mail: MailConfig | undefined
  /** Days before a license's expiry with a `license.expiring_soon` notice, e.g. [14, 3]. */
  readonly expiryNoticeDays: readonly number[]
  /** The customer portal at /portal (KEYTURN_PORTAL). */
  readonly portal: boolean
  /** KEYTURN_PUBLIC_URL without a trailing slash; undefined: unset (http://HOST:PORT is used). */
  readonly publicUrl: string | undefined
  /** Single sign-on for operators (KEYTURN_OIDC_*); undefined: off. */
  readonly oidc: OidcConfig | undefined
  readonly protection: ProtectionConfig
  /** How far V8 may grow a `keyturn serve` process's heap (flags on its command line: entry/heap-flags.ts). */
  readonly heap: {
    /** The largest semi-space of the young generation in MiB (V8 doubles it from 1: 1, 2, 4, 8, 16); 0: V8's own (16). */
    readonly semiSpaceMb: number
    /** How much the old generation may grow past what the last full collection kept, in %; 0: V8's own (up to 300). */
    readonly oldGrowthPercent: number
  }
}

export interface MailConfig {
  /** `smtp://` or `smtps://`, with user and password in the URL when the server wants them. */
  readonly smtpUrl: string
  /** The From header, e.g. `Acme Licensing <licensing@acme.example>`. */
  readonly from: string
  /** A folder whose `<template>.<subject|txt|html>.eta` files replace the built-in templates. */
  readonly templatesFolder: string | undefined
}

/** Rate limits, the key-guessing guard, proxies and CORS (docs/guides/protection.md). */
export interface ProtectionConfig {
  /** Requests per API key per minute (management keys; each key has one budget for the management API and one for the application-facing routes); 0: off. */
  readonly keyPerMinute: number
  /** Requests per client IP per minute on application-facing routes (client keys) and unauthenticated requests; 0: off. */
  readonly ipPerMinute: number
  /** `license_not_found` answers to one IP within 10 minutes before it is blocked; 0: off. */
  readonly guessLimit: number
  readonly guessBlockSeconds: number
  /** Shared counters for every process; unset: in memory (one process) or the cluster primary (`--workers`). */
  readonly redisUrl: string | undefined
  /** Fastify's `trustProxy`: false, true, a hop count, or a list of proxy addresses/CIDRs. */
  readonly trustProxy: boolean | number | string
  /** Origins allowed by CORS; empty: CORS off. */
  readonly corsOrigins: readonly string[]
}

/** Bad configuration: every problem at once, so one restart fixes them all. */
export class ConfigError extends Error {
  readonly problems: readonly string[]
  constructor(problems: readonly string[], options?: ErrorOptions) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`, options)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/** Reads the environment once into a frozen Config; throws ConfigError listing every problem. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  // Keep only declared variables, drop empty ones (unset), fill defaults, turn '8080' into 8080.
  const declared = Object.fromEntries(
    environmentVariables
      .map((name) => [name, env[name]] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  )
  // Clean returns unknown; the object it returns is checked below.
  const candidate = Clean(EnvSchema, Convert(EnvSchema, Default(EnvSchema, declared))) as Record<
    string,
    unknown
  >
  const problems = Errors(EnvSchema, candidate).map(describeProblem)
  // Cross-field rules run even when the schema failed, so the list is complete.
  const url = typeof candidate.KEYTURN_DATABASE_URL === 'string' ? candidate.KEYTURN_DATABASE_URL : ''
  const database = parseDatabaseUrl(url)
  if (url !== '' && database === undefined) {
    problems.push('KEYTURN_DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…')
  }
  if (database?.kind === 'postgres' && candidate.KEYTURN_SECRET === undefined) {
    problems.push('KEYTURN_SECRET is required with PostgreSQL: every Keyturn process must share it')
  }
  const trustProxy = parseTrustProxy(candidate.KEYTURN_TRUST_PROXY)
  if (trustProxy === undefined) {
    problems.push(
      'KEYTURN_TRUST_PROXY must be false, true, a number of proxy hops, or comma-separated proxy addresses/CIDRs',
    )
  }
  const oidcVariables = [
    candidate.KEYTURN_OIDC_ISSUER,
    candidate.KEYTURN_OIDC_CLIENT_ID,
    candidate.KEYTURN_OIDC_CLIENT_SECRET,
    candidate.KEYTURN_OIDC_DOMAINS,
  ]
  const oidcSet = oidcVariables.filter((value) => value !== undefined).length
  if (oidcSet > 0 && oidcSet < oidcVariables.length) {
    problems.push(
      'KEYTURN_OIDC_ISSUER, KEYTURN_OIDC_CLIENT_ID, KEYTURN_OIDC_CLIENT_SECRET and KEYTURN_OIDC_DOMAINS go together: set all four to turn single sign-on on',
    )
  }
  const corsOrigins = parseOrigins(candidate.KEYTURN_CORS_ORIGINS)
  if (corsOrigins === undefined) {
    problems.push('KEYTURN_CORS_ORIGINS must be comma-separated origins such as https://app.example.com')
  }
  if (
    problems.length > 0 ||
    database === undefined ||
    trustProxy === undefined ||
    corsOrigins === undefined ||
    !Check(EnvSchema, candidate)
  ) {
    throw new ConfigError(problems)
  }
  return Object.freeze({
    port: candidate.PORT,
    host: candidate.HOST,
    database:
      database.kind === 'postgres'
        ? { ...database, preparedStatements: candidate.KEYTURN_POSTGRES_PREPARED_STATEMENTS }
        : database,
    databaseTimeoutMs: candidate.KEYTURN_DATABASE_TIMEOUT_MS,
    adminKey: candidate.KEYTURN_ADMIN_KEY,
    secret: candidate.KEYTURN_SECRET,
    logLevel: candidate.LOG_LEVEL,
    recordValidations: candidate.KEYTURN_RECORD_VALIDATIONS,
    eventRetentionDays: candidate.KEYTURN_EVENT_RETENTION_DAYS,
    webhookAllowHttp: candidate.KEYTURN_WEBHOOK_ALLOW_HTTP,
    webhookAllowPrivate: candidate.KEYTURN_WEBHOOK_ALLOW_PRIVATE,
    webhookLeaseSeconds: candidate.KEYTURN_WEBHOOK_LEASE_SECONDS,
    mail:
      candidate.KEYTURN_SMTP_URL === undefined
        ? undefined
        : Object.freeze({
            smtpUrl: candidate.KEYTURN_SMTP_URL,
            from: candidate.KEYTURN_MAIL_FROM ?? 'keyturn@localhost',
            templatesFolder: candidate.KEYTURN_MAIL_TEMPLATES,
          }),
    expiryNoticeDays: Object.freeze(
      candidate.KEYTURN_EXPIRY_NOTICE_DAYS.split(',').map((days) => Number(days.trim())),
    ),
    portal: candidate.KEYTURN_PORTAL,
    publicUrl: candidate.KEYTURN_PUBLIC_URL?.replace(/\/+$/, ''),
    oidc:
      candidate.KEYTURN_OIDC_ISSUER === undefined ||
      candidate.KEYTURN_OIDC_CLIENT_ID === undefined ||
      candidate.KEYTURN_OIDC_CLIENT_SECRET === undefined ||
      candidate.KEYTURN_OIDC_DOMAINS === undefined
        ? undefined
        : Object.freeze({
            issuer: candidate.KEYTURN_OIDC_ISSUER,
            clientId: candidate.KEYTURN_OIDC_CLIENT_ID,
            clientSecret: candidate.KEYTURN_OIDC_CLIENT_SECRET,
            domains: Object.freeze(
              candidate.KEYTURN_OIDC_DOMAINS.split(',').map((domain) => domain.trim().toLowerCase()),
            ),
            role: candidate.KEYTURN_OIDC_ROLE,
          }),
    protection: Object.freeze({
      keyPerMinute: candidate.KEYTURN_RATE_LIMIT_KEY_PER_MINUTE,
      ipPerMinute: candidate.KEYTURN_RATE_LIMIT_IP_PER_MINUTE,
      guessLimit: candidate.KEYTURN_GUESS_LIMIT,
      guessBlockSeconds: candidate.KEYTURN_GUESS_BLOCK_SECONDS,
      redisUrl: candidate.KEYTURN_REDIS_URL,
      trustProxy,
      corsOrigins,
    }),
    heap: Object.freeze({
      semiSpaceMb: candidate.KEYTURN_HEAP_SEMI_SPACE_MB,
      oldGrowthPercent: candidate.KEYTURN_HEAP_GROWTH_PERCENT,
    }),
  })
}

function parseTrustProxy(value: unknown): boolean | number | string | undefined {
  if (typeof value !== 'string') {
    return undefined
  }
  const text = value.trim()
  if (text === 'false' || text === 'true') {
    return text === 'true'
  }
  if (/^\d{1,2}$/.test(text)) {
    return Number(text)
  }
  // Addresses or CIDRs (IPv4 or IPv6), comma-separated: what Fastify's trustProxy accepts.
  const parts = text.split(',').map((part) => part.trim())
  return parts.every((part) => /^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(part)) ? parts.join(',') : undefined
}

function parseOrigins(value: unknown): readonly string[] | undefined {
  if (value === undefined) {
    return []
  }
  if (typeof value !== 'string') {
    return undefined
  }
  const origins = value.split(',').map((origin) => origin.trim())
  return origins.every((origin) => /^https?:\/\/[^/\s]+$/.test(origin)) ? origins : undefined
}

type SchemaProblem = ReturnType<typeof Errors>[number]

/** `PORT must be integer`: names the variable and the rule, never the value (some are secrets). */
function describeProblem(error: SchemaProblem): string {
  const name = error.instancePath.slice(1) || 'environment'
  const params = error.params as { allowedValues?: readonly unknown[] } // TypeBox's enum parameters
  if (error.keyword === 'enum' && params.allowedValues !== undefined) {
    return `${name} must be one of ${params.allowedValues.join(', ')}`
  }
  return `${name} ${error.message}`
}
