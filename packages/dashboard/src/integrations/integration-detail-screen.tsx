import type { KeyturnClient } from '@keyturn/client'
import { PasswordInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { CopyButton } from '../components/copy-button.js'
import { DataTable } from '../components/data-table.js'
import { DeleteSection, DetailScreen, EditSection, useDetailMutations } from '../components/detail-screen.js'
import { Fact, Facts } from '../components/facts.js'
import { ProblemMessage } from '../components/problem-message.js'
import { ProductLink } from '../components/product-field.js'
import { StatusBadge } from '../components/status-badge.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'
import { IntegrationFieldset, itemNames, providerNames, toIntegrationFields } from './integration-form.js'

type IntegrationEvent = Awaited<ReturnType<KeyturnClient['listIntegrationEvents']>>['data'][number]

export function IntegrationDetailScreen() {
  const { client } = useSession()
  const id = useParams().id ?? '' // the route's :id; the API answers 404 for a bad one
  const integration = useQuery({ queryKey: ['integration', id], queryFn: () => client.getIntegration(id) })
  const { update, remove } = useDetailMutations({
    update: (form) => client.updateIntegration(id, toIntegrationFields(form)),
    remove: () => client.deleteIntegration(id),
    back: '/integrations',
  })
  return (
    <DetailScreen back="/integrations" backLabel="Payment providers" resource={integration}>
      {(data) => {
        // The address this dashboard was reached at; behind another public address, use that one.
        const receiver = `${window.location.origin}${data.webhookPath}`
        return (
          <>
            <h1>{data.description ?? providerNames[data.provider]}</h1>
            <Facts>
              <Fact term="Provider">{providerNames[data.provider]}</Fact>
              <Fact term="Id">
                <code>{data.id}</code>
              </Fact>
              <Fact term="Receiver URL">
                <code>{receiver}</code> <CopyButton value={receiver} label="Copy receiver URL" />
                <p className="muted">
                  Paste it into {providerNames[data.provider]}&apos;s webhook settings (the server&apos;s
                  public address if it differs from this one).
                </p>
              </Fact>
              <Fact term="Sells">
                {data.mappings.length === 0 ? (
                  'Nothing yet: purchases are received and ignored'
                ) : (
                  <ul>
                    {data.mappings.map((mapping) => (
                      <li key={mapping.providerItemId}>
                        <code>{mapping.providerItemId}</code> →{' '}
                        <Link to={`/policies/${mapping.policyId}`}>{mapping.policyId}</Link> of{' '}
                        <ProductLink id={mapping.productId} />
                      </li>
                    ))}
                  </ul>
                )}
              </Fact>
              <Fact term="Refunds">
                {data.onRefund === 'revoke' ? 'Revoke the license' : 'Leave the license as it is'}
              </Fact>
              <Fact term="Failed payments">The license keeps working {data.paymentGraceDays} days</Fact>
              <Fact term="Updated">
                <Time value={data.updatedAt} />
              </Fact>
            </Facts>
            <EditSection version={data.updatedAt} saveLabel="Save integration" mutation={update}>
              <IntegrationFieldset integration={data} provider={data.provider} />
              <PasswordInput
                label="New signing secret (empty: keep the stored one)"
                name="signingSecret"
                autoComplete="off"
                minLength={8}
                maxLength={500}
              />
            </EditSection>
            <ReceivedEvents integrationId={data.id} itemName={itemNames[data.provider]} />
            <DeleteSection noun="integration" mutation={remove}>
              <p>
                {providerNames[data.provider]}&apos;s webhooks are refused from now on. Licenses it made stay
                as they are.
              </p>
            </DeleteSection>
          </>
        )
      }}
    </DetailScreen>
  )
}

const statusBadge: Record<IntegrationEvent['status'], string> = {
  processed: 'active',
  ignored: 'expired',
  pending: 'suspended',
  failed: 'revoked',
}

/** The provider's latest deliveries and what each did; polled while one waits to be retried. */
function ReceivedEvents({ integrationId, itemName }: { integrationId: string; itemName: string }) {
  const { client } = useSession()
  const events = useQuery({
    queryKey: ['integration-events', integrationId],
    queryFn: () => client.listIntegrationEvents(integrationId),
    refetchInterval: (current) =>
      current.state.data?.data.some((event) => event.status === 'pending') ? 2_000 : 15_000,
  })
  return (
    <section aria-labelledby="received-heading">
      <h2 id="received-heading">Received events</h2>
      <ProblemMessage error={events.error} />
      {events.data &&
        (events.data.data.length === 0 ? (
          <p className="muted">
            Nothing received yet. Send a test webhook from the provider, or buy a {itemName} in test mode.
          </p>
        ) : (
          <DataTable label="Received provider events">
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
                    <StatusBadge status={event.status} tone={statusBadge[event.status]} />
                  </td>
                  <td>{event.outcome}</td>
                  <td>{event.attempts}</td>
                  <td>
                    <Time value={event.nextAttemptAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
        ))}
    </section>
  )
}
