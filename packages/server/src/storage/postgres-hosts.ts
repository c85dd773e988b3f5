/**
 * @module Several PostgreSQL hosts in one URL, as libpq reads them
 * (`postgres://user@primary:5432,standby:5432/keyturn?target_session_attrs=read-write`), which
 * node-postgres does not: the pool's connections go to the first host that answers and, with
 * `target_session_attrs=read-write` (or `primary`), accepts writes. After a failover (the primary
 * gone, a standby promoted), new connections find the new primary by themselves.
 */
import type pg from 'pg'

export interface PostgresHost {
  readonly host: string
  readonly port: number
}

export interface PostgresTarget {
  /** The URL node-postgres reads (user, password, database, options), naming the first host only. */
  readonly url: string
  readonly hosts: readonly PostgresHost[]
  /** A connection is kept only on a server that accepts writes (not a standby). */
  readonly readWrite: boolean
}

const defaultPort = 5432

/**
 * Reads the host list and `target_session_attrs` of a `postgres://` URL; throws on a value it does
 * not understand. A URL with one host and no `target_session_attrs` comes back as it was.
 */
export function parsePostgresTarget(url: string): PostgresTarget {
  const match = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/s.exec(url)
  if (match === null) {
    throw new Error('not a postgres:// URL')
  }
  const [, scheme = '', userInfo = '', hostList = '', rest = ''] = match
  const hosts = hostList === '' ? [] : hostList.split(',').map(parseHost)
  const queryStart = rest.indexOf('?')
  const path = queryStart === -1 ? rest : rest.slice(0, queryStart)
  const query = new URLSearchParams(queryStart === -1 ? '' : rest.slice(queryStart + 1))
  const attrs = query.get('target_session_attrs')
  if (attrs !== null && !['any', 'read-write', 'primary'].includes(attrs)) {
    throw new Error(`target_session_attrs=${attrs}: Keyturn understands any, read-write and primary`)
  }
  if (hosts.length <= 1 && attrs === null) {
    return { url, hosts, readWrite: false }
  }
  query.delete('target_session_attrs')
  const first = hosts[0]
  const authority = first === undefined ? '' : formatHost(first)
  const search = query.size === 0 ? '' : `?${query.toString()}`
  return {
    url: `${scheme}${userInfo}${authority}${path}${search}`,
    hosts,
    readWrite: attrs === 'read-write' || attrs === 'primary',
  }
}

function parseHost(text: string): PostgresHost {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  const plain = /^([^:]+)(?::(\d+))?$/.exec(text)
  const parts = bracketed ?? plain
  if (parts === null || parts[1] === undefined) {
    throw new Error(`cannot read the host "${text}"`)
  }
  const port = parts[2] === undefined ? defaultPort : Number(parts[2])
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`the port of "${text}" is not a port number`)
  }
  return { host: decodeURIComponent(parts[1]), port }
}

function formatHost({ host, port }: PostgresHost): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

/** The error for a server that accepts no writes: SQLSTATE 25006 (read_only_sql_transaction). */
function readOnly(host: PostgresHost): Error {
  return Object.assign(new Error(`${formatHost(host)} accepts no writes (a standby)`), { code: '25006' })
}

type ClientConfig = ConstructorParameters<typeof pg.Client>[0]

/**
 * A `pg.Client` class for the pool that connects to the host list's current host: the one the last
 * connection found writable. While that is unknown (at start, or once a connection failed or found
 * a standby), a new connection first tries the hosts in order with a short-lived client each and
 * keeps the first that answers (and, `readWrite`, accepts writes); none: an AggregateError of why.
 */
export function hostListClient(Client: typeof pg.Client, target: PostgresTarget): typeof pg.Client {
  const { hosts, readWrite } = target
  let current = 0
  let known = false
  let finding: Promise<number> | undefined

  /** Throws unless the connected `client` may write (when asked for). */
  const checkWritable = async (client: pg.Client, host: PostgresHost): Promise<void> => {
    if (readWrite) {
      const { rows } = await client.query<{ transaction_read_only: string }>('show transaction_read_only')
      if (rows[0]?.transaction_read_only !== 'off') {
        throw readOnly(host)
      }
    }
  }

  const find = async (config: ClientConfig): Promise<number> => {
    const errors: unknown[] = []
    for (const [index, host] of hosts.entries()) {
      const probe = new Client(config)
      probe.host = host.host
      probe.port = host.port
      probe.on('error', () => {}) // an error after the probe ended changes nothing
      try {
        await probe.connect()
        await checkWritable(probe, host)
        return index
      } catch (error) {
        errors.push(error)
      } finally {
        await probe.end().catch(() => undefined)
      }
    }
    throw new AggregateError(
      errors,
      'no PostgreSQL host of KEYTURN_DATABASE_URL accepts connections for writing',
    )
  }

  class HostListClient extends Client {
    readonly #config: ClientConfig

    constructor(config?: ClientConfig) {
      super(config)
      this.#config = config
    }

    // pg-pool connects with a callback, everything else with the promise.
    // biome-ignore lint/suspicious/noExplicitAny: overrides both of pg.Client's connect overloads
    override connect(callback?: (error: any, client?: any) => void): any {
      const connected = this.#connect()
      if (callback === undefined) {
        return connected.then(() => this)
      }
      connected.then(
        () => callback(null, this),
        (error: Error) => callback(error),
      )
    }

    async #connect(): Promise<void> {
      if (!known) {
        // Connections opened together share one search.
        finding ??= find(this.#config).finally(() => {
          finding = undefined
        })
        current = await finding
        known = true
      }
      const index = current
      const host = hosts[index] ?? { host: this.host, port: this.port }
      this.host = host.host
      this.port = host.port
      // The next connection looks for the writable host again when this one fails.
      const forget = () => {
        if (current === index) {
          known = false
        }
      }
      await super.connect().catch((error: unknown) => {
        forget()
        throw error
      })
      try {
        await checkWritable(this as pg.Client, host)
      } catch (error) {
        forget()
        await this.end().catch(() => undefined)
        throw error
      }
    }
  }
  return HostListClient
}
