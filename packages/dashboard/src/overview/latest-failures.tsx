import type { ProductId, StatsFailures } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { EmptyState } from '../components/empty-state.js'
import { ProblemMessage } from '../components/problem-message.js'
import { StatusBadge } from '../components/status-badge.js'
import { Time } from '../components/time.js'
import { isAdmin, useSession } from '../session/session.js'

type RateLimited = StatsFailures['rateLimited'][number]

const budgets: Readonly<Record<RateLimited['budget'], string>> = {
  management: 'management API',
  application: 'application routes',
  address: 'per address',
  receiver: 'provider webhooks',
}

/**
 * What went wrong lately (`GET /stats/failures`): webhook deliveries whose last attempt failed,
 * linked to their endpoint, and the clients the rate limits refused, linked where the dashboard
 * shows them. Refusals are this server process's since it started.
 */
export function LatestFailures({ productId }: { productId: ProductId | undefined }) {
  const session = useSession()
  const failures = useQuery({
    queryKey: ['stats', 'failures', productId ?? 'all'],
    queryFn: () => session.client.statsFailures(productId === undefined ? {} : { productId }),
  })
  return (
    <section aria-labelledby="failures-heading">
      <h2 id="failures-heading">Latest failures</h2>
      <ProblemMessage error={failures.error} />
      {failures.data && (
        <>
          <FailingDeliveries deliveries={failures.data.webhookDeliveries} />
          <RateLimitedClients
            clients={failures.data.rateLimited}
            since={failures.data.rateLimitedSince}
            seesIntegrations={isAdmin(session)}
          />
        </>
      )}
    </section>
  )
}

function FailingDeliveries({ deliveries }: { deliveries: StatsFailures['webhookDeliveries'] }) {
  if (deliveries.length === 0) {
    return <EmptyState title="No webhook delivery is failing." />
  }
  return (
    <DataTable label="Webhook deliveries failing">
      <thead>
        <tr>
          <th scope="col">Endpoint</th>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last error</th>
          <th scope="col">Last attempt</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((delivery) => (
          <tr key={delivery.deliveryId}>
            <td>
              <Link to={`/webhooks/${delivery.endpointId}`}>{delivery.endpointUrl}</Link>
            </td>
            <td>
              <code>{delivery.eventType}</code>
            </td>
            <td>
              <StatusBadge status={delivery.status === 'failed' ? 'failed' : 'pending'} />{' '}
              {delivery.status === 'failed' ? (
                'given up'
              ) : (
                <>
                  retrying at <Time value={delivery.nextAttemptAt} />
                </>
              )}
            </td>
            <td>{delivery.attempts}</td>
            <td>{delivery.lastError ?? `HTTP ${delivery.lastResponseStatus ?? '—'}`}</td>
            <td>
              <Time value={delivery.lastAttemptAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </DataTable>
  )
}

function RateLimitedClients({
  clients,
  since,
  seesIntegrations,
}: {
  clients: StatsFailures['rateLimited']
  since: string
  seesIntegrations: boolean
}) {
  const link = (client: RateLimited) =>
    client.clientKind === 'apiKey'
      ? '/api-keys'
      : client.clientKind === 'integration' && seesIntegrations
        ? `/integrations/${client.client}`
        : undefined
  return (
    <>
      {clients.length === 0 ? (
        <EmptyState title="No client was rate-limited." />
      ) : (
        <DataTable label="Rate-limited clients">
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Limit</th>
              <th scope="col">Refused</th>
              <th scope="col">Last refused</th>
            </tr>
          </thead>
          <tbody>
            {clients.map((client) => {
              const to = link(client)
              const name = `${client.clientKind === 'apiKey' ? 'API key' : client.clientKind} ${client.client}`
              return (
                <tr key={`${client.budget} ${client.clientKind} ${client.client} ${client.productId}`}>
                  <td>{to === undefined ? name : <Link to={to}>{name}</Link>}</td>
                  <td>{budgets[client.budget]}</td>
                  <td>{client.refused.toLocaleString('en')}</td>
                  <td>
                    <Time value={client.lastRefusedAt} />
                  </td>
                </tr>
              )
            })}
          </tbody>
        </DataTable>
      )}
      <p className="muted">
        Rate-limit refusals are kept in this server process&apos;s memory since <Time value={since} />.
      </p>
    </>
  )
}
