import type { KeyturnClient } from '@keyturn/client'
import { Button, Group } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { useParams, useSearchParams } from 'react-router'
import { ConfirmButton } from '../components/confirm-button.js'
import { DataTable } from '../components/data-table.js'
import { DeleteSection, DetailScreen, EditSection, useDetailMutations } from '../components/detail-screen.js'
import { Fact, Facts } from '../components/facts.js'
import { pagingQuery, readListParams } from '../components/list-params.js'
import { notifyDone } from '../components/notify.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { SecretPanel } from '../components/secret-panel.js'
import { StatusBadge } from '../components/status-badge.js'
import { Time } from '../components/time.js'
import { Allowed, isAdmin, useSession } from '../session/session.js'
import { EndpointFieldset, toEndpointFields } from './endpoint-form.js'

type EndpointId = Parameters<KeyturnClient['getWebhookEndpoint']>[0]
type Delivery = Awaited<ReturnType<KeyturnClient['listWebhookDeliveries']>>['data'][number]

export function WebhookDetailScreen() {
  const { client } = useSession()
  const id = (useParams().id ?? '') as EndpointId // the route's :id; the API answers 404 for a bad one
  const endpoint = useQuery({
    queryKey: ['webhook-endpoint', id],
    queryFn: () => client.getWebhookEndpoint(id),
  })
  const queryClient = useQueryClient()
  const [secret, setSecret] = useState<string>()
  const done = () => queryClient.invalidateQueries()
  const { update, remove } = useDetailMutations({
    update: (form) => client.updateWebhookEndpoint(id, toEndpointFields(form)),
    remove: () => client.deleteWebhookEndpoint(id),
    back: '/webhooks',
  })
  // A test event becomes a delivery when a worker picks it up (within a second or so): watch for it.
  const [watchUntil, setWatchUntil] = useState(0)
  const test = useMutation({
    mutationFn: () => client.testWebhookEndpoint(id),
    onSuccess: async () => {
      notifyDone('Test event queued.')
      setWatchUntil(Date.now() + watchMs)
      await done()
    },
  })
  const rotate = useMutation({
    mutationFn: () => client.rotateWebhookEndpointSecret(id),
    onSuccess: async (rotated) => {
      setSecret(rotated.secret)
      await done()
    },
  })
  return (
    <DetailScreen back="/webhooks" backLabel="Webhooks" resource={endpoint}>
      {(data) => (
        <>
          <h1>{data.description ?? data.url}</h1>
          <Facts>
            <Fact term="URL">{data.url}</Fact>
            <Fact term="Id">
              <code>{data.id}</code>
            </Fact>
            <Fact term="Events">
              <code>{data.eventTypes.join(', ')}</code>
            </Fact>
            <Fact term="State">{data.enabled ? 'Enabled' : 'Disabled: nothing is sent'}</Fact>
            <Fact term="Updated">
              <Time value={data.updatedAt} />
            </Fact>
          </Facts>
          {secret !== undefined && (
            <SecretPanel title="New signing secret" secret={secret} onDismiss={() => setSecret(undefined)} />
          )}
          <Allowed least="admin">
            <section aria-label="Actions">
              <Group my="sm">
                <Button
                  variant="default"
                  type="button"
                  onClick={() => test.mutate()}
                  disabled={test.isPending}
                >
                  Send a test event
                </Button>
                <ConfirmButton
                  label="Rotate secret"
                  title="Rotate the signing secret?"
                  confirmLabel="Rotate secret"
                  danger
                  onConfirm={() => rotate.mutate()}
                >
                  <p>Deliveries are signed with a new secret from now on: the receiver must be given it.</p>
                </ConfirmButton>
              </Group>
              <ProblemMessage error={test.error ?? rotate.error} />
            </section>
          </Allowed>
          <EditSection version={data.updatedAt} saveLabel="Save endpoint" mutation={update}>
            <EndpointFieldset endpoint={data} />
          </EditSection>
          <Deliveries endpointId={id} watchUntil={watchUntil} />
          <DeleteSection noun="endpoint" mutation={remove}>
            <p>
              Nothing more is sent to <strong>{data.url}</strong>; its delivery log goes with it.
            </p>
          </DeleteSection>
        </>
      )}
    </DetailScreen>
  )
}

const deliveryBadge: Record<Delivery['status'], string> = {
  delivered: 'active',
  pending: 'suspended',
  failed: 'revoked',
}

/** How long the delivery log is polled quickly after a test event or a retry. */
const watchMs = 30_000

/**
 * The endpoint's delivery log. Deliveries are made and sent by the server's workers, not by the
 * requests that cause them, so the log polls: twice a second while a delivery is pending or one is
 * expected, every 10 s otherwise (one page each time; never in a background tab).
 */
function Deliveries({ endpointId, watchUntil }: { endpointId: EndpointId; watchUntil: number }) {
  const session = useSession()
  const { client } = session
  const mayRetry = isAdmin(session)
  const [search] = useSearchParams()
  const query = pagingQuery(readListParams(search))
  const queryClient = useQueryClient()
  const [retriedAt, setRetriedAt] = useState(0)
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', endpointId, query],
    queryFn: () => client.listWebhookDeliveries(endpointId, query),
    placeholderData: (previous) => previous,
    refetchInterval: (current) =>
      Date.now() < Math.max(watchUntil, retriedAt + watchMs) ||
      current.state.data?.data.some((delivery) => delivery.status === 'pending')
        ? 500
        : 10_000,
  })
  const retry = useMutation({
    mutationFn: (id: Delivery['id']) => client.retryWebhookDelivery(id),
    onSuccess: async () => {
      setRetriedAt(Date.now())
      await queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', endpointId] })
    },
  })
  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Delivery log</h2>
      <ProblemMessage error={deliveries.error ?? retry.error} />
      {deliveries.data && (
        <>
          <DataTable label="Deliveries">
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Next attempt</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <Time value={delivery.createdAt} />
                  </td>
                  <td>
                    <code>{delivery.eventType}</code>
                  </td>
                  <td>
                    <StatusBadge status={delivery.status} tone={deliveryBadge[delivery.status]} />
                  </td>
                  <td>{delivery.attempts}</td>
                  <td>
                    {delivery.lastResponseStatus !== null ? `HTTP ${delivery.lastResponseStatus}` : ''}
                    {delivery.lastError !== null ? ` ${delivery.lastError}` : ''}
                  </td>
                  <td>
                    <Time value={delivery.nextAttemptAt} />
                  </td>
                  <td>
                    {delivery.status !== 'delivered' && mayRetry && (
                      <Button
                        variant="default"
                        type="button"
                        onClick={() => retry.mutate(delivery.id)}
                        disabled={retry.isPending}
                      >
                        Retry {delivery.eventType}
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
          <Pager result={deliveries.data} noun="delivery" />
        </>
      )}
    </section>
  )
}
