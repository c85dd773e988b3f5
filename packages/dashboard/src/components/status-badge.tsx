import { Badge, type MantineColor } from '@mantine/core'

const colors: Record<string, MantineColor> = {
  active: 'green',
  valid: 'green',
  delivered: 'green',
  sent: 'green',
  enabled: 'green',
  revoked: 'red',
  suspended: 'red',
  failed: 'red',
  disabled: 'gray',
  expired: 'orange',
  pending: 'yellow',
  archived: 'gray',
}

/**
 * A status as a badge: a coloured dot beside the word (the word is in the body's text colour, so it
 * reads at AA contrast in both themes; the colour only repeats what the word says).
 */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge variant="dot" color={colors[status] ?? 'gray'} tt="none" fw={600} className={`status ${status}`}>
      {status}
    </Badge>
  )
}
