import { useId, useState } from 'react'
import { ProblemMessage } from '../components/problem-message.js'
import { clientFor, discoverAccess, storeApiKey } from './session.js'

/**
 * The API key is typed (or pasted) here, checked against the API, and kept in sessionStorage only:
 * it is gone when the tab closes or on "Sign out", and never put in a URL or a cookie.
 */
export function SignInScreen({
  onSignedIn,
  reason,
}: {
  onSignedIn: (apiKey: string) => void
  reason?: string
}) {
  const keyId = useId()
  const [error, setError] = useState<unknown>()
  const [isChecking, setIsChecking] = useState(false)
  return (
    <main className="centered sign-in">
      <h1>Keyturn dashboard</h1>
      {reason && <p role="status">{reason}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const apiKey = String(new FormData(event.currentTarget).get('apiKey') ?? '').trim()
          setIsChecking(true)
          setError(undefined)
          discoverAccess(clientFor(apiKey)).then(
            () => {
              storeApiKey(apiKey)
              onSignedIn(apiKey)
            },
            (failure: unknown) => {
              setIsChecking(false)
              setError(failure)
            },
          )
        }}
      >
        <label htmlFor={keyId}>API key</label>
        <input
          id={keyId}
          name="apiKey"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          minLength={8}
          aria-describedby={`${keyId}-help`}
        />
        <p id={`${keyId}-help`} className="muted">
          An admin key (<code>kt_admin_…</code>) or a product key (<code>kt_prod_…</code>). It stays in this
          tab only and is forgotten when you sign out or close the tab.
        </p>
        <button type="submit" className="primary" disabled={isChecking}>
          {isChecking ? 'Signing in…' : 'Sign in'}
        </button>
        <ProblemMessage error={error} />
      </form>
    </main>
  )
}
