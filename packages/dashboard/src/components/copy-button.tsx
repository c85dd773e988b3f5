import { Button, Group } from '@mantine/core'
import { useState } from 'react'

/** Copies `value` to the clipboard and says so (or says it could not, so the text can be copied by hand). */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle')
  return (
    <Group component="span" gap="xs" display="inline-flex">
      <Button
        variant="default"
        size="sm"
        onClick={() => {
          navigator.clipboard.writeText(value).then(
            () => setState('copied'),
            () => setState('failed'),
          )
        }}
      >
        {label}
      </Button>
      <span role="status" className="muted">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Could not copy: select the text instead' : ''}
      </span>
    </Group>
  )
}
