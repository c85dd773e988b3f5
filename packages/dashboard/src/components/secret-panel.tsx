import { Alert, Button, Group, TextInput } from '@mantine/core'
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
      <Alert color="yellow" variant="outline" role="alert" className="secret-warning">
        <strong>Copy this secret now. It is shown only once:</strong> Keyturn cannot show it again.
      </Alert>
      <TextInput
        id={`${id}-secret`}
        label="Secret"
        readOnly
        value={secret}
        spellCheck={false}
        ff="monospace"
        my="xs"
      />
      <CopyButton value={secret} label="Copy secret" />
      <Group className="actions">
        <Button variant="default" onClick={onDismiss}>
          I have stored it
        </Button>
      </Group>
    </section>
  )
}
