import { Anchor, Button, PasswordInput, TextInput } from '@mantine/core'
import { type ReactNode, useEffect, useState } from 'react'
import { FieldStack, FormButtons } from '../components/form-layout.js'
import { ProblemMessage } from '../components/problem-message.js'
import { operatorRequest, type SignedIn } from './session.js'
import { isPending, type PendingSignIn, SecondStepScreen } from './two-factor.js'

/**
 * A sign-in answer may ask for a second step (a code, or the enrolment the server requires) before
 * any session exists: `answered` shows it, else hands the operator over.
 */
function useSecondStep(onSignedIn: (signedIn: SignedIn) => void) {
  const [pending, setPending] = useState<PendingSignIn>()
  const answered = (answer: SignedIn) => (isPending(answer) ? setPending(answer) : onSignedIn(answer))
  const secondStep = pending && <SecondStepScreen pending={pending} onSignedIn={onSignedIn} />
  return { answered, secondStep }
}

/** Why a single sign-on came back to this page (the server names the problem's code only). */
function ssoProblem(): string | undefined {
  const code = new URLSearchParams(window.location.search).get('sso-error')
  if (code === null) {
    return undefined
  }
  return code === 'sso_refused'
    ? 'Single sign-on refused: the identity provider has not verified your address, its domain is not allowed here, or an account with this address exists already (sign in with its password).'
    : 'Single sign-on did not complete. Start again.'
}

/** Whether single sign-on is configured (`GET /operator/oidc` answers 404 when it is not). */
function useSsoAvailable(): boolean {
  const [available, setAvailable] = useState(false)
  useEffect(() => {
    fetch('/operator/oidc', { credentials: 'same-origin', headers: { accept: 'application/json' } }).then(
      (response) => setAvailable(response.ok),
      () => setAvailable(false),
    )
  }, [])
  return available
}

/** A form of the sign-in pages: posts to `/operator<path>`, then hands over the signed-in operator. */
function OperatorForm({
  title,
  intro,
  path,
  submitLabel,
  body,
  onSignedIn,
  children,
  after,
}: {
  title: string
  intro?: ReactNode
  /** Below the form (another form may not be inside it). */
  after?: ReactNode
  path: string
  submitLabel: string
  body: (form: FormData) => Record<string, string>
  onSignedIn: (signedIn: SignedIn) => void
  children: ReactNode
}) {
  const [error, setError] = useState<unknown>()
  const [isSending, setIsSending] = useState(false)
  return (
    <main className="centered sign-in">
      <h1>{title}</h1>
      {intro}
      <form
        onSubmit={(event) => {
          event.preventDefault()
          setIsSending(true)
          setError(undefined)
          operatorRequest<SignedIn>(path, { body: body(new FormData(event.currentTarget)) }).then(
            onSignedIn,
            (failure: unknown) => {
              setIsSending(false)
              setError(failure)
            },
          )
        }}
      >
        <Fields submit={isSending ? 'Please wait…' : submitLabel} disabled={isSending}>
          {children}
        </Fields>
        <ProblemMessage error={error} />
      </form>
      {after}
    </main>
  )
}

const text = (form: FormData, name: string) => String(form.get(name) ?? '')

/** A sign-in form's fields one below the other, as wide as the form, then its button. */
function Fields({ submit, disabled, children }: { submit: string; disabled: boolean; children: ReactNode }) {
  return (
    <FieldStack>
      {children}
      <FormButtons>
        <Button type="submit" disabled={disabled}>
          {submit}
        </Button>
      </FormButtons>
    </FieldStack>
  )
}

function Field({
  label,
  name,
  type,
  autoComplete,
  help,
}: {
  label: string
  name: string
  type: 'email' | 'text' | 'password'
  autoComplete: string
  help?: string
}) {
  const shared = { label, name, autoComplete, required: true, spellCheck: false, description: help }
  if (type === 'password') {
    return (
      <PasswordInput
        {...shared}
        {...(autoComplete === 'new-password' ? { minLength: 12 } : {})}
        // Not "… password …": the field alone answers to the word (getByLabel, screen readers' lists).
        visibilityToggleButtonProps={{ 'aria-label': 'Show the characters typed' }}
      />
    )
  }
  return <TextInput {...shared} type={type} />
}

const newPasswordHelp = 'At least 12 characters; common passwords are refused.'

/** Email and password; the server sets the session cookie (httpOnly: the page never sees it). */
export function SignInScreen({
  onSignedIn,
  reason,
}: {
  onSignedIn: (signedIn: SignedIn) => void
  reason?: string | undefined
}) {
  const { answered, secondStep } = useSecondStep(onSignedIn)
  const sso = useSsoAvailable()
  if (secondStep) {
    return secondStep
  }
  return (
    <OperatorForm
      title="Keyturn dashboard"
      intro={
        <>
          {reason && <p role="status">{reason}</p>}
          {ssoProblem() !== undefined && (
            <p role="alert" className="problem">
              {ssoProblem()}
            </p>
          )}
          {sso && (
            <p>
              <Button component="a" variant="default" href="/operator/oidc/start">
                Sign in with SSO
              </Button>
            </p>
          )}
        </>
      }
      path="/sign-in"
      submitLabel="Sign in"
      body={(form) => ({ email: text(form, 'email').trim(), password: text(form, 'password') })}
      onSignedIn={answered}
      after={<ForgotPassword />}
    >
      <Field label="Email" name="email" type="email" autoComplete="username" />
      <Field label="Password" name="password" type="password" autoComplete="current-password" />
    </OperatorForm>
  )
}

/**
 * "Forgot your password?": the server mails a reset link to an active operator's address (when it
 * sends mail) and answers the same for any address, so the page says the same too.
 */
function ForgotPassword() {
  const [state, setState] = useState<'closed' | 'idle' | 'sending' | 'sent'>('closed')
  const [error, setError] = useState<unknown>()
  if (state === 'closed') {
    // The form is made only when asked for: the sign-in form's fields stay the only ones on the page.
    return (
      <p>
        <Anchor component="button" type="button" fw={600} onClick={() => setState('idle')}>
          Forgot your password?
        </Anchor>
      </p>
    )
  }
  return (
    <section aria-label="Reset your password">
      {state === 'sent' ? (
        <p role="status">
          If this address belongs to an operator, a link to choose a new password is on its way (it works for
          one hour). No mail? The server may send none: ask an owner for a reset link.
        </p>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault()
            setState('sending')
            setError(undefined)
            const email = text(new FormData(event.currentTarget), 'email').trim()
            operatorRequest('/password-reset-request', { body: { email } }).then(
              () => setState('sent'),
              (failure: unknown) => {
                setState('idle')
                setError(failure)
              },
            )
          }}
        >
          <Fields submit="Mail me a reset link" disabled={state === 'sending'}>
            <Field label="Your address" name="email" type="email" autoComplete="username" />
          </Fields>
          <ProblemMessage error={error} />
        </form>
      )}
    </section>
  )
}

/** The link's secret is after `#`: browsers never send it to a server (nor in a Referer). */
function linkToken(): string {
  return window.location.hash.slice(1)
}

/** The first start's one-time link (`/dashboard/setup#<token>`): the first owner chooses a name and password. */
export function SetupScreen({ onSignedIn }: { onSignedIn: (signedIn: SignedIn) => void }) {
  return (
    <OperatorForm
      title="Set up Keyturn"
      intro={<p>You are the first owner: choose how you sign in.</p>}
      path="/setup"
      submitLabel="Create owner and sign in"
      body={(form) => ({
        token: linkToken(),
        email: text(form, 'email').trim(),
        name: text(form, 'name').trim(),
        password: text(form, 'password'),
      })}
      onSignedIn={onSignedIn}
    >
      <Field label="Email" name="email" type="email" autoComplete="username" />
      <Field label="Name" name="name" type="text" autoComplete="name" />
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        help={newPasswordHelp}
      />
    </OperatorForm>
  )
}

/** A reset link, mailed or handed over by an owner (`/dashboard/password-reset#<token>`): a new password, then sign in. */
export function PasswordResetScreen({ onDone }: { onDone: () => void }) {
  const [error, setError] = useState<unknown>()
  const [isSending, setIsSending] = useState(false)
  return (
    <main className="centered sign-in">
      <h1>Choose a new password</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          setIsSending(true)
          setError(undefined)
          const password = text(new FormData(event.currentTarget), 'password')
          operatorRequest('/password-reset', { body: { token: linkToken(), password } }).then(
            onDone,
            (failure) => {
              setIsSending(false)
              setError(failure)
            },
          )
        }}
      >
        <Fields submit="Set password" disabled={isSending}>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            help={newPasswordHelp}
          />
        </Fields>
        <ProblemMessage error={error} />
      </form>
    </main>
  )
}

/** An invitation's one-time link (`/dashboard/invitation#<token>`): the invited person chooses a password. */
export function InvitationScreen({ onSignedIn }: { onSignedIn: (signedIn: SignedIn) => void }) {
  const { answered, secondStep } = useSecondStep(onSignedIn)
  if (secondStep) {
    return secondStep
  }
  return (
    <OperatorForm
      title="Join Keyturn"
      intro={<p>You were invited: choose a password to sign in with.</p>}
      path="/invitation"
      submitLabel="Set password and sign in"
      body={(form) => ({ token: linkToken(), password: text(form, 'password') })}
      onSignedIn={answered}
    >
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        help={newPasswordHelp}
      />
    </OperatorForm>
  )
}
