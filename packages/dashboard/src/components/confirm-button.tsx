import { type ReactNode, useId, useRef } from 'react'

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
 * A destructive action never happens on one click: the button opens a modal <dialog> (focus moves
 * into it, Escape cancels) whose confirm button does it.
 */
export function ConfirmButton(props: ConfirmButtonProps) {
  const dialog = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const close = () => dialog.current?.close()
  return (
    <>
      <button
        type="button"
        className={props.danger ? 'danger' : undefined}
        disabled={props.disabled}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} className="confirm">
        <h2 id={titleId}>{props.title}</h2>
        <div>{props.children}</div>
        <div className="actions">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button
            type="button"
            className={props.danger ? 'danger' : 'primary'}
            onClick={() => {
              close()
              props.onConfirm()
            }}
          >
            {props.confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  )
}
