import { KeyturnApiError, KeyturnConnectionError } from '@keyturn/client'
import { Alert } from '@mantine/core'

/**
 * What went wrong with an action, next to the form or button that caused it: the problem's `detail`
 * and each field error. Everything is rendered as text (React escapes it), so hostile data stays text.
 */
export function ProblemMessage({ error }: { error: unknown }) {
  if (error === null || error === undefined) {
    return null
  }
  if (error instanceof KeyturnApiError) {
    return (
      <Alert role="alert" color="red" variant="outline" className="problem">
        <p>
          <strong>{error.problem.title}</strong>: {error.detail}
        </p>
        {error.errors.length > 0 && (
          <ul>
            {error.errors.map((fieldError) => (
              <li key={`${fieldError.pointer}:${fieldError.detail}`}>
                <code>{fieldError.pointer}</code> {fieldError.detail}
              </li>
            ))}
          </ul>
        )}
        <p className="muted">
          Code <code>{error.code}</code>
          {error.requestId ? (
            <>
              {' '}
              · request <code>{error.requestId}</code>
            </>
          ) : null}
        </p>
      </Alert>
    )
  }
  const message =
    error instanceof KeyturnConnectionError || error instanceof Error ? error.message : String(error)
  return (
    <Alert role="alert" color="red" variant="outline" className="problem">
      <p>{message}</p>
    </Alert>
  )
}
