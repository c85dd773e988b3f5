/**
 * @module The container files as a deployer uses them (docs/container.md): compose.yaml wires two
 * Keyturn replicas to its PostgreSQL, Redis and proxy with a configuration Keyturn accepts, and the
 * Dockerfile's final stage is non-root with its data on /data and a health check on /readyz.
 * scripts/container-check.sh builds and starts the image itself (buildah, where the machine can).
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { loadConfig } from '../config.js'

const repository = fileURLToPath(new URL('../../../../', import.meta.url))

interface ComposeService {
  build?: string
  image?: string
  deploy?: { replicas?: number }
  environment?: Record<string, string>
  ports?: string[]
  read_only?: boolean
  volumes?: string[]
  depends_on?: Record<string, { condition: string }> | string[]
  networks?: Record<string, { ipv4_address?: string } | null> | string[]
}

/** Compose's `${NAME:?message}` and `${NAME:-default}`, with the values a deployer's .env would give. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::[?-]([^}]*))?\}/g, (_whole, name: string, fallback?: string) => {
    return env[name] ?? (fallback !== undefined && !fallback.startsWith('set ') ? fallback : '')
  })
}

describe('compose.yaml', () => {
  const compose = parse(readFileSync(join(repository, 'compose.yaml'), 'utf8')) as {
    services: Record<string, ComposeService>
    networks: Record<string, { ipam: { config: { subnet: string }[] } }>
  }
  const { keyturn, postgres, redis, proxy } = compose.services
  const dotEnv = { KEYTURN_SECRET: 'a-generated-secret-of-at-least-32-characters', POSTGRES_PASSWORD: 'pw' }

  it('runs two read-only Keyturn replicas of the Dockerfile, reachable only through the proxy', () => {
    assert.ok(keyturn && postgres && redis && proxy, Object.keys(compose.services).join(', '))
    assert.equal(keyturn.build, '.')
    assert.equal(keyturn.deploy?.replicas, 2)
    assert.equal(keyturn.read_only, true)
    assert.equal(keyturn.ports, undefined, 'no replica publishes a port of its own')
    assert.deepEqual(proxy.ports, ['127.0.0.1:8080:80'])
    assert.deepEqual(Object.keys(keyturn.depends_on ?? {}).sort(), ['postgres', 'redis'])
  })

  it('gives the replicas a configuration Keyturn accepts, pointing at its PostgreSQL and Redis', () => {
    const env = Object.fromEntries(
      Object.entries(keyturn?.environment ?? {}).map(([name, value]) => [name, interpolate(value, dotEnv)]),
    )
    const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')))
    assert.equal(config.database.kind, 'postgres')
    const database = new URL(env.KEYTURN_DATABASE_URL ?? '')
    const postgresEnv = postgres?.environment ?? {}
    assert.equal(database.hostname, 'postgres')
    assert.equal(database.username, postgresEnv.POSTGRES_USER)
    assert.equal(database.pathname, `/${postgresEnv.POSTGRES_DB}`)
    assert.equal(
      decodeURIComponent(database.password),
      interpolate(postgresEnv.POSTGRES_PASSWORD ?? '', dotEnv),
    )
    assert.equal(new URL(env.KEYTURN_REDIS_URL ?? '').hostname, 'redis')
    assert.equal(config.secret, dotEnv.KEYTURN_SECRET)
  })

  it("trusts X-Forwarded-For from the proxy's fixed address only, inside the compose network", () => {
    const networks = proxy?.networks as Record<string, { ipv4_address?: string }>
    const address = networks.keyturn?.ipv4_address ?? ''
    assert.equal(keyturn?.environment?.KEYTURN_TRUST_PROXY, address)
    const [subnet] = compose.networks.keyturn?.ipam.config ?? []
    assert.ok(
      address.startsWith(subnet?.subnet.replace(/0\/24$/, '') ?? '?'),
      `${address} in ${subnet?.subnet}`,
    )
  })

  it("mounts a proxy configuration that forwards to every replica's port", () => {
    const [mount] = proxy?.volumes ?? []
    const [file] = mount?.split(':') ?? []
    const caddyfile = readFileSync(join(repository, file ?? ''), 'utf8')
    assert.match(caddyfile, /dynamic a keyturn 3000/)
    assert.match(caddyfile, /respond @operations 404/)
  })
})

describe('Dockerfile', () => {
  // Continuation lines joined: one instruction per entry.
  const instructions = readFileSync(join(repository, 'Dockerfile'), 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
  const stages = instructions.filter((line) => line.startsWith('FROM '))
  const final = instructions.slice(instructions.lastIndexOf(stages.at(-1) ?? ''))

  it('builds in one stage and runs from a second one that holds only the installed package', () => {
    assert.equal(stages.length, 2, stages.join(' | '))
    assert.deepEqual(
      final.filter((line) => line.startsWith('COPY ')),
      ['COPY --from=build /opt/keyturn /opt/keyturn'],
    )
    assert.equal(
      final.some((line) => line.startsWith('RUN ') && /\bnpm\b/.test(line)),
      false,
      'nothing is installed at run time',
    )
    assert.ok(existsSync(join(repository, '.dockerignore')))
  })

  it('runs as a user without privileges, keeps its data on the /data volume and checks /readyz', () => {
    assert.ok(final.includes('USER node'), final.join('\n'))
    assert.ok(final.includes('VOLUME ["/data"]'))
    const healthcheck = final.find((line) => line.startsWith('HEALTHCHECK ')) ?? ''
    assert.match(healthcheck, /\/readyz/)
    const env = Object.fromEntries(
      [...(final.find((line) => line.startsWith('ENV '))?.matchAll(/(\w+)=(\S+)/g) ?? [])].map(
        ([, name, value]) => [name ?? '', value ?? ''],
      ),
    )
    const config = loadConfig({
      HOST: env.HOST,
      PORT: env.PORT,
      KEYTURN_DATABASE_URL: env.KEYTURN_DATABASE_URL,
    })
    assert.deepEqual(config.database, { kind: 'sqlite', path: '/data/keyturn.db' })
    assert.equal(config.host, '0.0.0.0')
  })
})
