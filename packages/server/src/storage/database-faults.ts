/**
 * @module Faults of the database itself, told apart from faults of a request: a PostgreSQL restart
 * or failover, a cut connection, a timeout, a full disk. The HTTP layer answers them with a 503 the
 * client may retry (`database_unavailable`, `storage_full`), never a 500, and never logs a stack
 * trace per request for them (the connection logs the outage once, storage/connect.ts).
 */

export type DatabaseFault = 'database_unavailable' | 'storage_full'

/**
 * SQLSTATE codes and classes that say the server, not the statement, is the problem: class 08
 * (connection exception), 57P01–57P03 (administrator or crash shutdown, cannot connect now), 53300
 * (too many connections), 57014 (statement timeout: Keyturn cancels nothing else), 25006 (a read-only
 * transaction: connected to a standby that has not been promoted, in the middle of a failover).
 */
const unavailableSqlStates = new Set(['57P01', '57P02', '57P03', '53300', '57014', '25006'])

/** Socket errors on the way to the database. */
const unavailableSocketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/** node-postgres reports a lost or unreachable server with these messages and no code. */
const unavailableMessages = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'is not queryable',
  'The database connection was lost', // storage/connect.ts, for a client already known broken
  'The database is not answering', // storage/connect.ts, failing fast during an outage
]

/** SQLite: the disk or the database's size limit is reached (`SQLITE_FULL`). */
const storageFullCodes = new Set(['SQLITE_FULL'])

/** SQLite: the file could not be read or written, or stayed locked past the busy timeout. */
const sqliteUnavailablePrefixes = ['SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_CANTOPEN']

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) {
    return undefined
  }
  return typeof error.code === 'string' ? error.code : undefined
}

function classify(error: unknown): DatabaseFault | undefined {
  const code = codeOf(error)
  if (code !== undefined) {
    if (storageFullCodes.has(code)) {
      return 'storage_full'
    }
    if (
      unavailableSqlStates.has(code) ||
      code.startsWith('08') ||
      unavailableSocketCodes.has(code) ||
      sqliteUnavailablePrefixes.some((prefix) => code.startsWith(prefix))
    ) {
      return 'database_unavailable'
    }
  }
  if (error instanceof Error && unavailableMessages.some((message) => error.message.includes(message))) {
    return 'database_unavailable'
  }
  return undefined
}

/**
 * The database fault an error stands for, or undefined when it is something else. Follows `cause`
 * (and an AggregateError's errors: a host list tried in turn) a few levels down.
 */
export function databaseFaultOf(error: unknown, depth = 0): DatabaseFault | undefined {
  const fault = classify(error)
  if (fault !== undefined || depth >= 3 || typeof error !== 'object' || error === null) {
    return fault
  }
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const found = databaseFaultOf(inner, depth + 1)
      if (found !== undefined) {
        return found
      }
    }
  }
  return 'cause' in error ? databaseFaultOf(error.cause, depth + 1) : undefined
}
