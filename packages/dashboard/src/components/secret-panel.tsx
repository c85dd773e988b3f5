import { useId } from 'react'
import { CopyButton } from './copy-button.js'

/** A secret the API shows only once: a clear warning, the value, a copy button and a way to dismiss it. */
export function SecretPanel({
  title,
  secret,
  onDismiss,
}: {
  title: string
  secret: string
  onDismiss: () => void
}) {
  const id = useId()
  return (
    <section className="secret" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{title}</h2>
      <p role="alert">
        <strong>Copy this secret now. It is shown only once:</strong> Keyturn cannot show it again.
      </p>
      <label htmlFor={`${id}-secret`}>Secret</label>
      <input id={`${id}-secret`} readOnly value={secret} className="wide" spellCheck={false} />
      <CopyButton value={secret} label="Copy secret" />
      <div className="actions">
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
    </section>
  )
}
