import type { OperatorSession } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { ProblemMessage } from '../components/problem-message.js'
import { SessionsTable } from '../components/sessions-table.js'
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
        <SessionsTable
          caption="Your sessions"
          sessions={sessions.data.data}
          action={(session) =>
            session.current ? (
              <span className="muted">This browser</span>
            ) : (
              <Button
                variant="default"
                type="button"
                onClick={() => end.mutate(session.id)}
                disabled={end.isPending}
              >
                End session from <Time value={session.createdAt} />
              </Button>
            )
          }
        />
      )}
    </>
  )
}
