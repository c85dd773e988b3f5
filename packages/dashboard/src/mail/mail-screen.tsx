import { Button } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link, useSearchParams } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { pagingQuery, readListParams } from '../components/list-params.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { StatusBadge } from '../components/status-badge.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'

const statusBadges = { sent: 'active', pending: 'expired', failed: 'revoked' } as const

/**
 * The mail delivery log (admin keys): which mail went to which customer and how its delivery went.
 * The API never gives the message, its address or a sign-in code, so neither does this screen.
 */
export function MailScreen() {
  const { client } = useSession()
  const [search] = useSearchParams()
  const query = pagingQuery(readListParams(search))
  const emails = useQuery({
    queryKey: ['emails', query],
    queryFn: ({ signal }) => client.listEmails(query, { signal }),
    placeholderData: (previous) => previous,
    // While a mail on the page waits to be sent, the page follows it.
    refetchInterval: (current) =>
      current.state.data?.data.some((email) => email.status === 'pending') === true ? 2_000 : false,
  })
  const products = useProductChoices()
  const names = new Map((products.data?.data ?? []).map((product) => [product.id, product.name]))
  return (
    <>
      <h1>Mail</h1>
      <p className="muted">
        Mail to customers is queued with the change that causes it and sent by the server, retried while the
        SMTP server refuses it. The server sends mail only when it is configured with{' '}
        <code>KEYTURN_SMTP_URL</code>.
      </p>
      <Button
        variant="default"
        type="button"
        onClick={() => void emails.refetch()}
        disabled={emails.isFetching}
      >
        Refresh
      </Button>
      <ProblemMessage error={emails.error} />
      {emails.data &&
        (emails.data.data.length === 0 && emails.data.page === 0 ? (
          <p>No mail yet.</p>
        ) : (
          <div aria-busy={emails.isFetching}>
            <DataTable label="Mail delivery log">
              <thead>
                <tr>
                  <th scope="col">Queued</th>
                  <th scope="col">Mail</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Product</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last error</th>
                  <th scope="col">Sent or next attempt</th>
                </tr>
              </thead>
              <tbody>
                {emails.data.data.map((email) => (
                  <tr key={email.id}>
                    <td>
                      <Time value={email.createdAt} />
                    </td>
                    <td>
                      <code>{email.template}</code>
                    </td>
                    <td>
                      {email.customerId === null ? (
                        '—'
                      ) : (
                        <Link to={`/customers/${email.customerId}`}>{email.customerId}</Link>
                      )}
                    </td>
                    <td>
                      {email.productId === null ? '—' : (names.get(email.productId) ?? email.productId)}
                    </td>
                    <td>
                      <StatusBadge status={email.status} tone={statusBadges[email.status]} />
                    </td>
                    <td>{email.attempts}</td>
                    <td>{email.lastError ?? '—'}</td>
                    <td>
                      <Time value={email.sentAt ?? email.nextAttemptAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </DataTable>
            <Pager result={emails.data} noun="message" />
          </div>
        ))}
    </>
  )
}
