import type { KeyturnClient } from '@keyturn/client'
import { NativeSelect } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { CreateDisclosure } from '../components/create-disclosure.js'
import { DataTable } from '../components/data-table.js'
import { pagingQuery, readListParams } from '../components/list-params.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { useProductNames } from '../components/product-field.js'
import { SecretPanel } from '../components/secret-panel.js'
import { StatusBadge } from '../components/status-badge.js'
import { Allowed, useSession } from '../session/session.js'
import { EndpointFieldset, toEndpointFields } from './endpoint-form.js'

type CreateEndpointBody = Parameters<KeyturnClient['createWebhookEndpoint']>[0]
type CreatedEndpoint = Awaited<ReturnType<KeyturnClient['createWebhookEndpoint']>>

export function WebhooksScreen() {
  const { client } = useSession()
  const [search] = useSearchParams()
  const query = pagingQuery(readListParams(search))
  const endpoints = useQuery({
    queryKey: ['webhook-endpoints', query],
    queryFn: () => client.listWebhookEndpoints(query),
    placeholderData: (previous) => previous,
  })
  const names = useProductNames()
  return (
    <>
      <h1>Webhooks</h1>
      <p className="muted">
        Keyturn POSTs signed events (Standard Webhooks) to these endpoints and retries failures.
      </p>
      <Allowed least="admin">
        <CreateEndpointForm />
      </Allowed>
      <ProblemMessage error={endpoints.error} />
      {endpoints.data && (
        <>
          <DataTable label="Webhook endpoints">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Description</th>
                <th scope="col">Events</th>
                <th scope="col">Product</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.data.map((endpoint) => (
                <tr key={endpoint.id}>
                  <td>
                    <Link to={`/webhooks/${endpoint.id}`}>{endpoint.url}</Link>
                  </td>
                  <td>{endpoint.description ?? '—'}</td>
                  <td>
                    <code>{endpoint.eventTypes.join(', ')}</code>
                  </td>
                  <td>
                    {endpoint.productId === null
                      ? 'All'
                      : (names.get(endpoint.productId) ?? endpoint.productId)}
                  </td>
                  <td>
                    <StatusBadge status={endpoint.enabled ? 'enabled' : 'disabled'} />
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
          <Pager result={endpoints.data} noun="endpoint" />
        </>
      )}
    </>
  )
}

function CreateEndpointForm() {
  const session = useSession()
  const queryClient = useQueryClient()
  const products = useProductChoices()
  const [created, setCreated] = useState<CreatedEndpoint>()
  const create = useMutation({
    mutationFn: (form: FormData) => {
      const productId = String(form.get('productId') ?? '')
      const body: CreateEndpointBody = {
        ...toEndpointFields(form),
        ...(productId === '' ? {} : { productId: productId as NonNullable<CreateEndpointBody['productId']> }),
      }
      return session.client.createWebhookEndpoint(body)
    },
    onSuccess: async (endpoint) => {
      setCreated(endpoint)
      await queryClient.invalidateQueries({ queryKey: ['webhook-endpoints'] })
    },
  })
  if (created !== undefined) {
    return (
      <SecretPanel
        title={`Signing secret of ${created.url}`}
        secret={created.secret}
        onDismiss={() => {
          setCreated(undefined)
          create.reset()
        }}
      />
    )
  }
  return (
    <CreateDisclosure
      summary="Add an endpoint"
      label="Add a webhook endpoint"
      submitLabel="Add endpoint"
      mutation={create}
    >
      <EndpointFieldset />
      <NativeSelect label="Product" name="productId" defaultValue="">
        <option value="">Every product, and global events</option>
        {(products.data?.data ?? []).map((product) => (
          <option key={product.id} value={product.id}>
            {product.name}
          </option>
        ))}
      </NativeSelect>
    </CreateDisclosure>
  )
}
