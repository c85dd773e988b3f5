import { Alert, Button, Group, TextInput } from '@mantine/core'
import { type ReactNode, useId } from 'react'
import { CopyButton } from './copy-button.js'

/**
 * A secret the API shows only once (a signing secret, an API key, a one-time link): a clear warning,
 * the value, a copy button and a way to dismiss it.
 */
export function SecretPanel({
  title,
  secret,
  onDismiss,
  label = 'Secret',
  copyLabel = 'Copy secret',
  dismissLabel = 'I have stored it',
  warning = (
    <>
      <strong>Copy this secret now. It is shown only once:</strong> Keyturn cannot show it again.
    </>
  ),
}: {
  title: string
  secret: string
  onDismiss: () => void
  /** The field's label (how it is found). */
  label?: string
  copyLabel?: string
  dismissLabel?: string
  warning?: ReactNode
}) {
  const id = useId()
  return (
    <section className="secret" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{title}</h2>
      <Alert color="yellow" variant="outline" role="alert" className="secret-warning">
        {warning}
      </Alert>
      <TextInput
        id={`${id}-secret`}
        label={label}
        readOnly
        value={secret}
        spellCheck={false}
        className="monospace"
        my="xs"
      />
      <CopyButton value={secret} label={copyLabel} />
      <Group className="actions">
        <Button variant="default" onClick={onDismiss}>
          {dismissLabel}
        </Button>
      </Group>
    </section>
  )
}
