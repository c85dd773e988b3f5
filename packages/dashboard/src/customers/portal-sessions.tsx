import type { KeyturnClient } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { notifyDone } from '../components/notify.js'
import { ProblemMessage } from '../components/problem-message.js'
import { SessionsTable } from '../components/sessions-table.js'
import { useSession } from '../session/session.js'

type CustomerId = Parameters<KeyturnClient['listPortalSessions']>[0]

/**
 * A customer's customer-portal sessions (where they are signed in now), each of which can be ended,
 * and a button that mails them a sign-in code. Admin keys only: the API refuses a product key.
 */
export function PortalSessionsSection({ customerId }: { readonly customerId: CustomerId }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const key = ['portal-sessions', customerId]
  const sessions = useQuery({ queryKey: key, queryFn: () => client.listPortalSessions(customerId) })
  const revoke = useMutation({
    mutationFn: (sessionId: string) => client.revokePortalSession(customerId, sessionId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const link = useMutation({
    mutationFn: () => client.sendPortalLink(customerId),
    onSuccess: () => notifyDone('The sign-in code is on its way.'),
  })
  return (
    <section aria-labelledby="portal-sessions-heading">
      <h2 id="portal-sessions-heading">Customer portal</h2>
      <Button variant="default" type="button" onClick={() => link.mutate()} disabled={link.isPending}>
        Mail a portal sign-in code
      </Button>
      <ProblemMessage error={link.error} />
      <ProblemMessage error={sessions.error ?? revoke.error} />
      {sessions.data &&
        (sessions.data.data.length === 0 ? (
          <p>Not signed in to the portal.</p>
        ) : (
          <SessionsTable
            caption="Portal sessions"
            sessions={sessions.data.data}
            action={(session) => (
              <Button
                color="red.9"
                type="button"
                disabled={revoke.isPending}
                onClick={() => revoke.mutate(session.id)}
              >
                Sign out this session
              </Button>
            )}
          />
        ))}
    </section>
  )
}
