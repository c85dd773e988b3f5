import { KeyturnApiError } from '@keyturn/client'
import { notifications } from '@mantine/notifications'

/**
 * The result of an action as a toast (top right; kept until closed when it is a failure), so a
 * result never shifts the form that caused it. A failure's detail stays next to its form as well
 * (ProblemMessage), where the field errors are.
 */
export function notifyDone(message: string, title?: string): void {
  notifications.show({ message, title, color: 'green', autoClose: 6_000, withBorder: true })
}

export function notifyFailed(error: unknown, title = 'That did not work'): void {
  const message =
    error instanceof KeyturnApiError ? error.detail : error instanceof Error ? error.message : String(error)
  notifications.show({ message, title, color: 'red', autoClose: false, withBorder: true })
}
