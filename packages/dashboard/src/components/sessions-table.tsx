import type { ReactNode } from 'react'
import { DataTable } from './data-table.js'
import { Time } from './time.js'

/** A session as the API lists it (an operator's or a portal customer's). */
interface SessionRow {
  readonly id: string
  readonly createdAt: string
  readonly lastSeenAt: string
  readonly expiresAt: string
}

/** Sessions, newest first as the API gives them, each with the action `action` renders for it. */
export function SessionsTable<T extends SessionRow>({
  caption,
  sessions,
  action,
}: {
  readonly caption: string
  readonly sessions: readonly T[]
  readonly action: (session: T) => ReactNode
}) {
  return (
    <DataTable label={caption}>
      <thead>
        <tr>
          <th scope="col">Signed in</th>
          <th scope="col">Last seen</th>
          <th scope="col">Ends at the latest</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((session) => (
          <tr key={session.id}>
            <td>
              <Time value={session.createdAt} />
            </td>
            <td>
              <Time value={session.lastSeenAt} />
            </td>
            <td>
              <Time value={session.expiresAt} />
            </td>
            <td>{action(session)}</td>
          </tr>
        ))}
      </tbody>
    </DataTable>
  )
}
