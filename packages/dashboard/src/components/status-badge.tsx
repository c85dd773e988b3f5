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
 * reads at AA contrast in both themes; the colour only repeats what the word says). `tone` names the
 * colour when the word alone does not (a mail's `sent` is good, its `failed` bad).
 */
export function StatusBadge({ status, tone = status }: { status: string; tone?: string | undefined }) {
  return (
    <Badge variant="dot" color={colors[tone] ?? 'gray'} tt="none" fw={600} className={`status ${tone}`}>
      {status}
    </Badge>
  )
}
