import { Modal } from '@mantine/core'
import type { ReactNode } from 'react'

/**
 * A dialog for one action (Mantine's Modal: focus moves into it and back after, Escape or its close
 * button closes it). Shown while mounted; `onClose` is called however it closes, and the caller
 * unmounts it.
 */
export function ActionDialog({
  title,
  onClose,
  children,
}: {
  readonly title: string
  readonly onClose: () => void
  readonly children: ReactNode
}) {
  return (
    <Modal opened onClose={onClose} title={title} centered size="lg">
      {children}
    </Modal>
  )
}
