function codeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined
}

/** Whether a driver error is a unique-constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error)
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/** Whether a driver error is a foreign-key violation: a row still referenced, or a reference to none. */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = codeOf(error)
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
}

/** Whether a driver error is a NOT NULL violation (SQLite or PostgreSQL). */
export function isNotNullViolation(error: unknown): boolean {
  const code = codeOf(error)
  return code === '23502' || code === 'SQLITE_CONSTRAINT_NOTNULL'
}

/** Whether PostgreSQL aborted the transaction to break a deadlock (SQLSTATE 40P01): retry it whole. */
export function isDeadlock(error: unknown): boolean {
  return codeOf(error) === '40P01'
}

/**
 * Whether PostgreSQL refused a prepared statement because a table it reads changed shape since it
 * was prepared (a migration by a newer process): storage/connect.ts then stops naming that SQL, and
 * a transaction it aborted runs again.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  return (
    codeOf(error) === '0A000' &&
    error instanceof Error &&
    error.message.startsWith('cached plan must not change result type')
  )
}

/**
 * Whether a unique violation is of a constraint on this column: PostgreSQL names the index
 * (`constraint`), SQLite lists the columns in its message ("UNIQUE constraint failed: t.a, t.b").
 */
export function isUniqueViolationOf(error: unknown, column: string): boolean {
  if (!isUniqueViolation(error) || !(error instanceof Error)) {
    return false
  }
  const constraint = (error as { constraint?: unknown }).constraint
  return typeof constraint === 'string' ? constraint.includes(column) : error.message.includes(`.${column}`)
}
