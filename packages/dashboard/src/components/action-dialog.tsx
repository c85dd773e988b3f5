import { type ReactNode, useEffect, useId, useRef } from 'react'

/**
 * A modal dialog for one action (native `<dialog>`: focus moves into it, the page behind is inert,
 * Escape closes it). Shown while mounted; `onClose` is called however it closes, and the caller
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
  const dialog = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const closed = useRef(onClose)
  closed.current = onClose
  useEffect(() => {
    const element = dialog.current
    if (element === null) {
      return
    }
    element.showModal()
    const onClosed = () => closed.current()
    element.addEventListener('close', onClosed)
    return () => {
      element.removeEventListener('close', onClosed)
      element.close()
    }
  }, [])
  return (
    <dialog ref={dialog} aria-labelledby={titleId} className="action">
      <h2 id={titleId}>{title}</h2>
      {children}
      <div className="actions">
        <button type="button" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  )
}
