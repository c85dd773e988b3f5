import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react'

export interface MenuAction {
  /** The item's label, e.g. "Renew…" (an ellipsis: it opens a dialog that asks more). */
  readonly label: string
  readonly onSelect: () => void
  readonly danger?: boolean
}

/**
 * A menu button (the WAI-ARIA menu button pattern): the button opens a list of actions; arrow keys,
 * Home and End move between them, Enter or a click chooses one, Escape or Tab closes the menu, and
 * focus goes back to the button when it closes.
 */
export function ActionMenu({
  label,
  actions,
}: {
  readonly label: string
  readonly actions: readonly MenuAction[]
}) {
  const [open, setOpen] = useState(false)
  const [active, setActive] = useState(0)
  const id = useId()
  const button = useRef<HTMLButtonElement>(null)
  const items = useRef<(HTMLButtonElement | null)[]>([])
  const root = useRef<HTMLDivElement>(null)

  useEffect(() => {
    if (open) {
      items.current[active]?.focus()
    }
  }, [open, active])
  useEffect(() => {
    if (!open) {
      return
    }
    const outside = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) {
        setOpen(false)
      }
    }
    document.addEventListener('pointerdown', outside)
    return () => document.removeEventListener('pointerdown', outside)
  }, [open])

  const close = (refocus: boolean) => {
    setOpen(false)
    if (refocus) {
      button.current?.focus()
    }
  }
  const onMenuKey = (event: KeyboardEvent) => {
    const last = actions.length - 1
    const moves: Record<string, number> = {
      ArrowDown: active === last ? 0 : active + 1,
      ArrowUp: active === 0 ? last : active - 1,
      Home: 0,
      End: last,
    }
    const next = moves[event.key]
    if (next !== undefined) {
      event.preventDefault()
      setActive(next)
    } else if (event.key === 'Escape') {
      event.preventDefault()
      close(true)
    } else if (event.key === 'Tab') {
      close(false)
    }
  }
  return (
    <div className="menu" ref={root}>
      <button
        ref={button}
        type="button"
        id={`${id}-button`}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={`${id}-menu`}
        onClick={() => {
          setActive(0)
          setOpen(!open)
        }}
        onKeyDown={(event) => {
          if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
            event.preventDefault()
            setActive(event.key === 'ArrowDown' ? 0 : actions.length - 1)
            setOpen(true)
          }
        }}
      >
        {label} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <div role="menu" id={`${id}-menu`} aria-labelledby={`${id}-button`} onKeyDown={onMenuKey}>
          {actions.map((action, index) => (
            <button
              key={action.label}
              ref={(element) => {
                items.current[index] = element
              }}
              type="button"
              role="menuitem"
              tabIndex={index === active ? 0 : -1}
              className={action.danger ? 'danger' : undefined}
              onClick={() => {
                close(true)
                action.onSelect()
              }}
            >
              {action.label}
            </button>
          ))}
        </div>
      )}
    </div>
  )
}
