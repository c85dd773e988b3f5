import { Button, Group, Modal } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import type { ReactNode } from 'react'

interface ConfirmButtonProps {
  /** The button's label, e.g. "Revoke". */
  readonly label: string
  /** The dialog's question, e.g. "Revoke this license?". */
  readonly title: string
  /** What will happen, in a sentence or two. */
  readonly children: ReactNode
  /** The confirming button's label, e.g. "Revoke license". */
  readonly confirmLabel: string
  readonly onConfirm: () => void
  readonly disabled?: boolean
  readonly danger?: boolean
}

/**
 * A destructive action never happens on one click: the button opens a confirmation dialog (a
 * Mantine modal: focus moves into it and returns after, Escape cancels) whose confirm button does it.
 */
export function ConfirmButton(props: ConfirmButtonProps) {
  const [opened, { open, close }] = useDisclosure(false)
  return (
    <>
      <Button
        variant={props.danger ? 'filled' : 'default'}
        color={props.danger ? 'red.9' : undefined}
        disabled={props.disabled}
        onClick={open}
      >
        {props.label}
      </Button>
      <ConfirmDialog
        opened={opened}
        onClose={close}
        title={props.title}
        confirmLabel={props.confirmLabel}
        danger={props.danger}
        onConfirm={props.onConfirm}
      >
        {props.children}
      </ConfirmDialog>
    </>
  )
}

/** The dialog of {@link ConfirmButton}, for actions opened from elsewhere (a menu item). */
export function ConfirmDialog(props: {
  readonly opened: boolean
  readonly onClose: () => void
  readonly title: string
  readonly children: ReactNode
  readonly confirmLabel: string
  readonly onConfirm: () => void
  readonly danger?: boolean | undefined
}) {
  return (
    <Modal opened={props.opened} onClose={props.onClose} title={props.title} centered>
      <div>{props.children}</div>
      <Group justify="flex-end" mt="md">
        <Button variant="default" onClick={props.onClose}>
          Cancel
        </Button>
        <Button
          color={props.danger ? 'red.9' : undefined}
          onClick={() => {
            props.onClose()
            props.onConfirm()
          }}
        >
          {props.confirmLabel}
        </Button>
      </Group>
    </Modal>
  )
}
