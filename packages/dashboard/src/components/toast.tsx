import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef, useState } from 'react'

interface Toast {
  readonly id: number
  readonly message: string
}

type Show = (message: string) => void

const ToastContext = createContext<Show>(() => {})

/** How long a result stays on screen (it can be dismissed earlier). */
const toastMs = 8_000

/**
 * Short results of actions ("License revoked.") in a polite live region at the corner of the
 * screen: screen readers announce them without moving focus. Each goes after a few seconds or when
 * dismissed.
 */
export function ToastProvider({ children }: { readonly children: ReactNode }) {
  const [toasts, setToasts] = useState<readonly Toast[]>([])
  const next = useRef(0)
  const timers = useRef(new Set<ReturnType<typeof setTimeout>>())
  const dismiss = useCallback((id: number) => setToasts((all) => all.filter((toast) => toast.id !== id)), [])
  const show = useCallback<Show>(
    (message) => {
      next.current += 1
      const id = next.current
      setToasts((all) => [...all.slice(-2), { id, message }])
      const timer = setTimeout(() => {
        timers.current.delete(timer)
        dismiss(id)
      }, toastMs)
      timers.current.add(timer)
    },
    [dismiss],
  )
  useEffect(() => {
    const pending = timers.current
    return () => {
      for (const timer of pending) {
        clearTimeout(timer)
      }
    }
  }, [])
  return (
    <ToastContext.Provider value={show}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((toast) => (
          <div className="toast" key={toast.id}>
            <p>{toast.message}</p>
            <button type="button" onClick={() => dismiss(toast.id)} aria-label="Dismiss">
              ×
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  )
}

/** Shows a short result of an action. */
export function useToast(): Show {
  return useContext(ToastContext)
}
