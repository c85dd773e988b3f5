import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'

const providerNames = { stripe: 'Stripe', paddle: 'Paddle', lemonsqueezy: 'Lemon Squeezy' } as const
const statusBadges = {
  processed: 'active',
  ignored: 'expired',
  pending: 'expired',
  failed: 'revoked',
} as const

/**
 * The payment-provider integrations (admin keys): which provider items sell which policy. They are
 * created and changed with `keyturn integrations` or the API: the signing secret is never typed here.
 */
export function IntegrationsScreen() {
  const { client } = useSession()
  const integrations = useQuery({
    queryKey: ['integrations'],
    queryFn: ({ signal }) => client.listIntegrations({ signal }),
  })
  return (
    <>
      <h1>Payment providers</h1>
      <p className="muted">
        Stripe, Paddle and Lemon Squeezy webhooks create, renew and end licenses by themselves. Connect a
        provider with <code>keyturn integrations create</code>.
      </p>
      <ProblemMessage error={integrations.error} />
      {integrations.data &&
        (integrations.data.data.length === 0 ? (
          <p>No payment provider is connected.</p>
        ) : (
          <table>
            <caption className="visually-hidden">Payment-provider integrations</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Description</th>
                <th scope="col">Items sold</th>
                <th scope="col">Refunds</th>
                <th scope="col">Payment grace</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {integrations.data.data.map((integration) => (
                <tr key={integration.id}>
                  <td>
                    <Link to={`/integrations/${integration.id}`}>{providerNames[integration.provider]}</Link>
                  </td>
                  <td>{integration.description ?? '—'}</td>
                  <td>{integration.mappings.length}</td>
                  <td>{integration.onRefund === 'revoke' ? 'revoke the license' : 'keep the license'}</td>
                  <td>
                    {integration.paymentGraceDays} {integration.paymentGraceDays === 1 ? 'day' : 'days'}
                  </td>
                  <td>
                    <Time value={integration.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
    </>
  )
}

/** One integration: its webhook path, what each item sells, and the latest events with what each did. */
export function IntegrationDetailScreen() {
  const { id = '' } = useParams()
  const { client } = useSession()
  const integration = useQuery({
    queryKey: ['integrations', id],
    queryFn: ({ signal }) => client.getIntegration(id, { signal }),
  })
  const events = useQuery({
    queryKey: ['integrations', id, 'events'],
    queryFn: ({ signal }) => client.listIntegrationEvents(id, { signal }),
  })
  const products = useProductChoices()
  const names = new Map((products.data?.data ?? []).map((product) => [product.id, product.name]))
  return (
    <>
      <p>
        <Link to="/integrations">← Payment providers</Link>
      </p>
      <ProblemMessage error={integration.error ?? events.error} />
      {integration.data && (
        <>
          <h1>{providerNames[integration.data.provider]}</h1>
          <p>
            Webhook URL: your server's public address followed by <code>{integration.data.webhookPath}</code>
          </p>
          {integration.data.mappings.length === 0 && <p>No item is mapped yet: purchases create nothing.</p>}
          <table hidden={integration.data.mappings.length === 0}>
            <caption>Items sold</caption>
            <thead>
              <tr>
                <th scope="col">Provider item</th>
                <th scope="col">Product</th>
                <th scope="col">Policy</th>
              </tr>
            </thead>
            <tbody>
              {integration.data.mappings.map((mapping) => (
                <tr key={mapping.providerItemId}>
                  <td>
                    <code>{mapping.providerItemId}</code>
                  </td>
                  <td>{names.get(mapping.productId) ?? mapping.productId}</td>
                  <td>
                    <Link to={`/policies/${mapping.policyId}`}>{mapping.policyId}</Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <h2>Latest events</h2>
      <button type="button" onClick={() => void events.refetch()} disabled={events.isFetching}>
        Refresh
      </button>
      {events.data &&
        (events.data.data.length === 0 ? (
          <p>No event received yet.</p>
        ) : (
          <table aria-busy={events.isFetching}>
            <caption className="visually-hidden">Received provider events</caption>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">What it did</th>
                <th scope="col">Attempts</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {events.data.data.map((event) => (
                <tr key={event.dedupeKey}>
                  <td>
                    <Time value={event.receivedAt} />
                  </td>
                  <td>
                    <code>{event.eventType}</code>
                  </td>
                  <td>
                    <span className={`badge ${statusBadges[event.status]}`}>{event.status}</span>
                  </td>
                  <td>{event.outcome}</td>
                  <td>{event.attempts}</td>
                  <td>
                    <Time value={event.nextAttemptAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
    </>
  )
}
