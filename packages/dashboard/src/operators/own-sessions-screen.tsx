import type { OperatorSession } from '@keyturn/client'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { ProblemMessage } from '../components/problem-message.js'
import { Time } from '../components/time.js'
import { operatorRequest, useSession } from '../session/session.js'

/** Your signed-in browsers: end any of them (this one signs out with the header's button). */
export function OwnSessionsScreen() {
  const { csrfToken } = useSession()
  const queryClient = useQueryClient()
  const sessions = useQuery({
    queryKey: ['own-sessions'],
    queryFn: () => operatorRequest<{ data: OperatorSession[] }>('/sessions'),
  })
  const end = useMutation({
    mutationFn: (id: string) =>
      operatorRequest(`/sessions/${encodeURIComponent(id)}`, { method: 'DELETE', csrfToken }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['own-sessions'] }),
  })
  return (
    <>
      <h1>Your sessions</h1>
      <p className="muted">
        The browsers signed in as you. A session ends after 30 idle minutes or 12 hours, or when you end it
        here.
      </p>
      <ProblemMessage error={sessions.error ?? end.error} />
      {sessions.data && (
        <table>
          <caption className="visually-hidden">Your sessions</caption>
          <thead>
            <tr>
              <th scope="col">Signed in</th>
              <th scope="col">Last request</th>
              <th scope="col">Ends at the latest</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.data.map((session) => (
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
                <td>
                  {session.current ? (
                    <span className="muted">This browser</span>
                  ) : (
                    <button type="button" onClick={() => end.mutate(session.id)} disabled={end.isPending}>
                      End session from <Time value={session.createdAt} />
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}
