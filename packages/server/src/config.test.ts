import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { ConfigError, environmentVariables, loadConfig } from './config.js'

const adminKey = 'kt_admin_0123456789abcdefghijklmnopqrstuv'
const secret = 'a-master-secret-of-at-least-32-characters'

/** The problems loadConfig reports for `env`, or fails when it accepts it. */
function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env)
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error))
    return error.problems
  }
  return assert.fail('the configuration was accepted')
}

describe('loadConfig', () => {
  it('uses the documented defaults when nothing is set', () => {
    assert.deepEqual(loadConfig({}), {
      port: 3000,
      host: '127.0.0.1',
      database: { kind: 'sqlite', path: './data/keyturn.db' },
      databaseTimeoutMs: 5000,
      adminKey: undefined,
      secret: undefined,
      logLevel: 'info',
      recordValidations: false,
      eventRetentionDays: 90,
      webhookAllowHttp: false,
      webhookAllowPrivate: false,
      webhookLeaseSeconds: 60,
      mail: undefined,
      expiryNoticeDays: [14, 3],
      portal: false,
      publicUrl: undefined,
      oidc: undefined,
      protection: {
        keyPerMinute: 6000,
        ipPerMinute: 300,
        guessLimit: 20,
        guessBlockSeconds: 900,
        redisUrl: undefined,
        trustProxy: false,
        corsOrigins: [],
      },
      heap: { semiSpaceMb: 4, oldGrowthPercent: 100 },
    })
  })

  it('treats empty variables as unset', () => {
    assert.equal(loadConfig({ PORT: '', LOG_LEVEL: '', KEYTURN_ADMIN_KEY: '' }).port, 3000)
  })

  it('reads every variable, turning PORT into a number', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      KEYTURN_DATABASE_URL: 'postgres://keyturn@db.internal:5432/keyturn',
      KEYTURN_ADMIN_KEY: adminKey,
      KEYTURN_SECRET: secret,
      LOG_LEVEL: 'warn',
      KEYTURN_RECORD_VALIDATIONS: 'true',
      KEYTURN_EVENT_RETENTION_DAYS: '30',
      KEYTURN_WEBHOOK_ALLOW_HTTP: 'true',
      KEYTURN_WEBHOOK_ALLOW_PRIVATE: 'true',
      KEYTURN_WEBHOOK_LEASE_SECONDS: '15',
      KEYTURN_SMTP_URL: 'smtps://mailer:p%40ss@smtp.example.com:465',
      KEYTURN_MAIL_FROM: 'Acme <licensing@acme.example>',
      KEYTURN_MAIL_TEMPLATES: '/etc/keyturn/mail',
      KEYTURN_EXPIRY_NOTICE_DAYS: '7',
      KEYTURN_PORTAL: 'true',
      KEYTURN_PUBLIC_URL: 'https://licensing.example.com/',
      KEYTURN_OIDC_ISSUER: 'https://accounts.google.com',
      KEYTURN_OIDC_CLIENT_ID: 'keyturn-client',
      KEYTURN_OIDC_CLIENT_SECRET: 'client-secret',
      KEYTURN_OIDC_DOMAINS: 'Example.com, example.org',
      KEYTURN_OIDC_ROLE: 'support',
      KEYTURN_RATE_LIMIT_KEY_PER_MINUTE: '100',
      KEYTURN_RATE_LIMIT_IP_PER_MINUTE: '0',
      KEYTURN_GUESS_LIMIT: '5',
      KEYTURN_GUESS_BLOCK_SECONDS: '60',
      KEYTURN_REDIS_URL: 'redis://cache.internal:6379/0',
      KEYTURN_TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
      KEYTURN_CORS_ORIGINS: 'https://app.example.com,http://localhost:5173',
      KEYTURN_POSTGRES_PREPARED_STATEMENTS: 'false',
      KEYTURN_DATABASE_TIMEOUT_MS: '2500',
      KEYTURN_HEAP_SEMI_SPACE_MB: '0',
      KEYTURN_HEAP_GROWTH_PERCENT: '50',
    })

    assert.deepEqual(config, {
      port: 8080,
      host: '0.0.0.0',
      database: {
        kind: 'postgres',
        url: 'postgres://keyturn@db.internal:5432/keyturn',
        preparedStatements: false,
      },
      databaseTimeoutMs: 2500,
      adminKey,
      secret,
      logLevel: 'warn',
      recordValidations: true,
      eventRetentionDays: 30,
      webhookAllowHttp: true,
      webhookAllowPrivate: true,
      webhookLeaseSeconds: 15,
      mail: {
        smtpUrl: 'smtps://mailer:p%40ss@smtp.example.com:465',
        from: 'Acme <licensing@acme.example>',
        templatesFolder: '/etc/keyturn/mail',
      },
      expiryNoticeDays: [7],
      portal: true,
      publicUrl: 'https://licensing.example.com',
      oidc: {
        issuer: 'https://accounts.google.com',
        clientId: 'keyturn-client',
        clientSecret: 'client-secret',
        domains: ['example.com', 'example.org'],
        role: 'support',
      },
      protection: {
        keyPerMinute: 100,
        ipPerMinute: 0,
        guessLimit: 5,
        guessBlockSeconds: 60,
        redisUrl: 'redis://cache.internal:6379/0',
        trustProxy: '10.0.0.0/8,192.168.1.1',
        corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      },
      heap: { semiSpaceMb: 0, oldGrowthPercent: 50 },
    })
  })

  it('turns single sign-on on only with all four of issuer, client id, client secret and domains', () => {
    assert.deepEqual(problemsOf({ KEYTURN_OIDC_ISSUER: 'https://login.example.com' }), [
      'KEYTURN_OIDC_ISSUER, KEYTURN_OIDC_CLIENT_ID, KEYTURN_OIDC_CLIENT_SECRET and KEYTURN_OIDC_DOMAINS go together: set all four to turn single sign-on on',
    ])
    assert.equal(
      problemsOf({
        KEYTURN_OIDC_ISSUER: 'http://login.example.com',
        KEYTURN_OIDC_CLIENT_ID: 'a',
        KEYTURN_OIDC_CLIENT_SECRET: 'b',
        KEYTURN_OIDC_DOMAINS: 'example.com',
        KEYTURN_OIDC_ROLE: 'owner',
      }).length,
      2,
      'an issuer over plain HTTP and an owner role are refused',
    )
  })

  it('refuses heap limits out of range', () => {
    assert.deepEqual(problemsOf({ KEYTURN_HEAP_SEMI_SPACE_MB: '65', KEYTURN_HEAP_GROWTH_PERCENT: '-1' }), [
      'KEYTURN_HEAP_SEMI_SPACE_MB must be <= 64',
      'KEYTURN_HEAP_GROWTH_PERCENT must be >= 0',
    ])
  })

  it('refuses a trust-proxy setting, CORS origin or Redis URL it cannot read', () => {
    assert.throws(
      () =>
        loadConfig({
          KEYTURN_TRUST_PROXY: 'yes please',
          KEYTURN_CORS_ORIGINS: 'app.example.com',
          KEYTURN_REDIS_URL: 'memcached://x',
        }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.deepEqual(error.problems, [
          'KEYTURN_REDIS_URL must match pattern "^rediss?://"',
          'KEYTURN_TRUST_PROXY must be false, true, a number of proxy hops, or comma-separated proxy addresses/CIDRs',
          'KEYTURN_CORS_ORIGINS must be comma-separated origins such as https://app.example.com',
        ])
        return true
      },
    )
    assert.equal(loadConfig({ KEYTURN_TRUST_PROXY: '2' }).protection.trustProxy, 2)
    assert.equal(loadConfig({ KEYTURN_TRUST_PROXY: 'true' }).protection.trustProxy, true)
  })

  it('accepts PORT=0 (a free port chosen by the system) and sqlite::memory:', () => {
    const config = loadConfig({ PORT: '0', KEYTURN_DATABASE_URL: 'sqlite::memory:' })
    assert.equal(config.port, 0)
    assert.deepEqual(config.database, { kind: 'sqlite', path: ':memory:' })
  })

  it('ignores variables it does not declare', () => {
    assert.equal(loadConfig({ NODE_ENV: 'production', PATH: '/usr/bin' }).port, 3000)
  })

  it('returns a frozen config', () => {
    assert.ok(Object.isFrozen(loadConfig({})))
  })

  it('lists every problem at once', () => {
    const problems = problemsOf({
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      KEYTURN_DATABASE_URL: 'postgres://keyturn@db.internal/keyturn',
      KEYTURN_ADMIN_KEY: 'too-short',
    })

    assert.deepEqual(problems, [
      'PORT must be integer',
      'KEYTURN_ADMIN_KEY must not have fewer than 32 characters',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      'KEYTURN_SECRET is required with PostgreSQL: every Keyturn process must share it',
    ])
  })

  it('lists a bad database URL together with the other problems', () => {
    assert.deepEqual(problemsOf({ PORT: '70000', KEYTURN_DATABASE_URL: 'mysql://root@db/keyturn' }), [
      'PORT must be <= 65535',
      'KEYTURN_DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…',
    ])
  })

  it('rejects a sqlite: URL without a path', () => {
    assert.deepEqual(problemsOf({ KEYTURN_DATABASE_URL: 'sqlite:' }), [
      'KEYTURN_DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…',
    ])
  })

  it('reads KEYTURN_EXPIRY_NOTICE_DAYS as a list of days and rejects anything else', () => {
    assert.deepEqual(loadConfig({ KEYTURN_EXPIRY_NOTICE_DAYS: '30, 7,1' }).expiryNoticeDays, [30, 7, 1])
    assert.equal(problemsOf({ KEYTURN_EXPIRY_NOTICE_DAYS: 'soon' }).length, 1)
  })

  it('rejects a short KEYTURN_SECRET', () => {
    assert.deepEqual(problemsOf({ KEYTURN_SECRET: 'short' }), [
      'KEYTURN_SECRET must not have fewer than 32 characters',
    ])
  })

  it('never echoes a value, secret or not', () => {
    const env = {
      PORT: 'port-value-1',
      LOG_LEVEL: 'level-value-2',
      KEYTURN_ADMIN_KEY: 'admin-value-3',
      KEYTURN_SECRET: 'secret-value-4',
      KEYTURN_DATABASE_URL: 'mysql://root:password-value-5@db/keyturn',
    }
    try {
      loadConfig(env)
      assert.fail('the configuration was accepted')
    } catch (error) {
      assert.ok(error instanceof ConfigError)
      const shown = `${error.message}\n${error.problems.join('\n')}\n${String(error)}\n${error.stack}`
      for (const value of ['port-value', 'level-value', 'admin-value', 'secret-value', 'password-value']) {
        assert.equal(shown.includes(value), false, `${value} appears in:\n${shown}`)
      }
      assert.equal(error.problems.length, 5, error.message)
    }
  })

  it('puts every problem in the error message, one a line', () => {
    assert.throws(() => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' }), {
      name: 'ConfigError',
      message:
        'Invalid configuration:\n  - PORT must be integer\n  - LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
  })
})

describe('.env.example', () => {
  it('documents every variable loadConfig reads', () => {
    const example = readFileSync(new URL('../../../.env.example', import.meta.url), 'utf8')
    for (const name of environmentVariables) {
      assert.match(example, new RegExp(`^#? ?${name}=`, 'm'), `${name} is missing from .env.example`)
    }
  })
})

describe('docs/operations/configuration.md', () => {
  it('has a row for every variable loadConfig reads', () => {
    const page = readFileSync(new URL('../../../docs/operations/configuration.md', import.meta.url), 'utf8')
    for (const name of environmentVariables) {
      assert.match(
        page,
        new RegExp(`^\\| \`${name}\` +\\|`, 'm'),
        `${name} is missing from the configuration page`,
      )
    }
  })
})
