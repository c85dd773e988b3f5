/**
 * @module Two factors in the dashboard: the second step of a sign-in (a code from the authenticator
 * app, or a recovery code), the enrolment (QR code, first code, recovery codes shown once), the
 * screen where an operator turns the second factor on or off, and where an owner requires it of
 * everyone. The pending token of a sign-in lives only in this page's memory.
 */
import { KeyturnApiError, type Problem } from '@keyturn/client'
import { Button, Checkbox, TextInput } from '@mantine/core'
import { useEffect, useState } from 'react'
import { FieldRow, FieldStack, FormButtons } from '../components/form-layout.js'
import { ProblemMessage } from '../components/problem-message.js'
import { type SignedIn, useSession } from './session.js'

/** A correct password whose sign-in still needs a second step. */
export interface PendingSignIn {
  readonly secondFactor: 'totp' | 'enrol'
  readonly pendingToken: string
}

export function isPending(answer: unknown): answer is PendingSignIn {
  return typeof answer === 'object' && answer !== null && 'secondFactor' in answer
}

interface Enrolment {
  readonly secret: string
  readonly uri: string
  readonly qrCode: string
}

interface Confirmed {
  readonly recoveryCodes: readonly string[]
  readonly operator?: SignedIn['operator']
  readonly csrfToken?: string
}

interface Status {
  readonly totp: boolean
  readonly recoveryCodesLeft: number
  readonly required: boolean
}

/** JSON to and from `/operator/2fa…`; a problem is thrown as `KeyturnApiError`. */
async function twoFactorRequest<T>(
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
  csrfToken?: string,
): Promise<T> {
  const response = await fetch(`/operator/2fa${path}`, {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(csrfToken === undefined ? {} : { 'x-keyturn-csrf': csrfToken }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!response.ok) {
    throw new KeyturnApiError((await response.json()) as Problem)
  }
  return (response.status === 204 ? undefined : await response.json()) as T
}

function CodeField({ label, recovery }: { label: string; recovery?: boolean }) {
  return (
    <TextInput
      label={label}
      name="code"
      type="text"
      required
      spellCheck={false}
      autoComplete="one-time-code"
      className="monospace"
      {...(recovery === true ? {} : { inputMode: 'numeric', pattern: '[0-9 ]{6,7}', maxLength: 7 })}
    />
  )
}

/** The second step of a sign-in: a code (or a recovery code), or the enrolment the server requires first. */
export function SecondStepScreen({
  pending,
  onSignedIn,
}: {
  pending: PendingSignIn
  onSignedIn: (signedIn: SignedIn) => void
}) {
  const [useRecovery, setUseRecovery] = useState(false)
  const [error, setError] = useState<unknown>()
  const [isSending, setIsSending] = useState(false)
  if (pending.secondFactor === 'enrol') {
    return (
      <main className="centered sign-in">
        <h1>Set up two-factor authentication</h1>
        <p>This server requires a second factor: add Keyturn to an authenticator app to continue.</p>
        <EnrolmentPanel
          pendingToken={pending.pendingToken}
          onDone={(confirmed) => {
            if (confirmed.operator !== undefined && confirmed.csrfToken !== undefined) {
              onSignedIn({ operator: confirmed.operator, csrfToken: confirmed.csrfToken })
            }
          }}
        />
      </main>
    )
  }
  return (
    <main className="centered sign-in">
      <h1>Two-factor authentication</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          const code = String(new FormData(event.currentTarget).get('code') ?? '').trim()
          setIsSending(true)
          setError(undefined)
          twoFactorRequest<SignedIn>('POST', '/verify', {
            pendingToken: pending.pendingToken,
            ...(useRecovery ? { recoveryCode: code } : { code }),
          }).then(onSignedIn, (failure: unknown) => {
            setIsSending(false)
            setError(failure)
          })
        }}
      >
        <FieldStack>
          <CodeField
            key={String(useRecovery)}
            label={useRecovery ? 'Recovery code' : 'Code from your authenticator app'}
            recovery={useRecovery}
          />
          <FormButtons>
            <Button type="submit" disabled={isSending}>
              {isSending ? 'Please wait…' : 'Verify'}
            </Button>
          </FormButtons>
        </FieldStack>
        <ProblemMessage error={error} />
      </form>
      <Button variant="default" type="button" onClick={() => setUseRecovery(!useRecovery)}>
        {useRecovery ? 'Use a code from the app' : 'Use a recovery code instead'}
      </Button>
    </main>
  )
}

/** Recovery codes, shown once. */
function RecoveryCodes({ codes, onDone }: { codes: readonly string[]; onDone: () => void }) {
  return (
    <section className="secret" aria-label="Recovery codes">
      <h2>Recovery codes</h2>
      <p role="alert">
        <strong>Store these codes now. They are shown only once:</strong> each lets you in once if you lose
        your authenticator.
      </p>
      <ul className="recovery-codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div className="actions">
        <Button type="button" onClick={onDone}>
          I have stored them
        </Button>
      </div>
    </section>
  )
}

/** Enrolment: the QR code and its secret, a first code to confirm, then the recovery codes once. */
function EnrolmentPanel({
  pendingToken,
  csrfToken,
  onDone,
}: {
  pendingToken?: string
  csrfToken?: string
  onDone: (confirmed: Confirmed) => void
}) {
  const [enrolment, setEnrolment] = useState<Enrolment>()
  const [confirmed, setConfirmed] = useState<Confirmed>()
  const [error, setError] = useState<unknown>()
  const [isSending, setIsSending] = useState(false)
  useEffect(() => {
    twoFactorRequest<Enrolment>(
      'POST',
      '/totp',
      pendingToken === undefined ? {} : { pendingToken },
      csrfToken,
    ).then(setEnrolment, setError)
  }, [pendingToken, csrfToken])
  if (confirmed !== undefined) {
    return <RecoveryCodes codes={confirmed.recoveryCodes} onDone={() => onDone(confirmed)} />
  }
  if (enrolment === undefined) {
    return error === undefined ? <p role="status">Preparing…</p> : <ProblemMessage error={error} />
  }
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        const code = String(new FormData(event.currentTarget).get('code') ?? '').trim()
        setIsSending(true)
        setError(undefined)
        twoFactorRequest<Confirmed>(
          'POST',
          '/totp/confirm',
          { code, ...(pendingToken === undefined ? {} : { pendingToken }) },
          csrfToken,
        ).then(setConfirmed, (failure: unknown) => {
          setIsSending(false)
          setError(failure)
        })
      }}
    >
      <p>Scan this QR code with an authenticator app, or type the key into it:</p>
      <img
        src={enrolment.qrCode}
        alt="QR code to add Keyturn to an authenticator app"
        width="200"
        height="200"
      />
      <p>
        Key: <code data-testid="totp-secret">{enrolment.secret}</code>
      </p>
      <FieldStack>
        <CodeField label="Code from your authenticator app" />
        <FormButtons>
          <Button type="submit" disabled={isSending}>
            {isSending ? 'Please wait…' : 'Confirm'}
          </Button>
        </FormButtons>
      </FieldStack>
      <ProblemMessage error={error} />
    </form>
  )
}

/** The signed-in operator's own second factor; owners also decide whether everyone needs one. */
export function TwoFactorScreen() {
  const session = useSession()
  const [status, setStatus] = useState<Status>()
  const [enrolling, setEnrolling] = useState(false)
  const [error, setError] = useState<unknown>()
  const reload = () => {
    twoFactorRequest<Status>('GET', '').then(setStatus, setError)
  }
  useEffect(reload, [])
  if (status === undefined) {
    return error === undefined ? <p role="status">Loading…</p> : <ProblemMessage error={error} />
  }
  return (
    <>
      <h1>Two-factor authentication</h1>
      {enrolling ? (
        <EnrolmentPanel
          csrfToken={session.csrfToken}
          onDone={() => {
            setEnrolling(false)
            reload()
          }}
        />
      ) : status.totp ? (
        <>
          <p role="status">
            On: sign-in asks for a code from your authenticator app. {status.recoveryCodesLeft} recovery codes
            left.
          </p>
          <form
            onSubmit={(event) => {
              event.preventDefault()
              const code = String(new FormData(event.currentTarget).get('code') ?? '').trim()
              setError(undefined)
              twoFactorRequest('POST', '/totp/disable', { code }, session.csrfToken).then(reload, setError)
            }}
          >
            <FieldRow>
              <CodeField label="Code from your authenticator app" />
              <Button variant="default" type="submit">
                Turn off
              </Button>
            </FieldRow>
          </form>
        </>
      ) : (
        <>
          <p role="status">Off: your password alone signs you in.</p>
          <Button type="button" onClick={() => setEnrolling(true)}>
            Turn on
          </Button>
        </>
      )}
      {session.access.operator.role === 'owner' && (
        <section>
          <h2>Everyone</h2>
          <Checkbox
            label="Require two-factor authentication of every operator who signs in with a password"
            checked={status.required}
            onChange={(event) => {
              setError(undefined)
              twoFactorRequest<Status>(
                'PUT',
                '/requirement',
                { required: event.currentTarget.checked },
                session.csrfToken,
              ).then(setStatus, setError)
            }}
          />
        </section>
      )}
      <ProblemMessage error={error} />
    </>
  )
}
