import { EmptyState as MantineEmptyState } from '@mantine/core'
import type { ReactNode } from 'react'

/** What a list says when it has nothing to show: a title, a sentence, and an action if there is one. */
export function EmptyState({
  title,
  children,
  action,
}: {
  title: string
  children?: ReactNode
  action?: ReactNode
}) {
  return (
    <MantineEmptyState className="empty" title={title} description={children} align="left" size="sm">
      {action}
    </MantineEmptyState>
  )
}
