import type { KeyturnClient } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useSession } from '../session/session.js'
import { IntegrationFieldset, providerNames, toIntegrationFields } from './integration-form.js'

type Provider = Parameters<KeyturnClient['createIntegration']>[0]['provider']

/** The payment-provider integrations (admin keys): each turns a provider's sales into licenses. */
export function IntegrationsScreen() {
  const { client } = useSession()
  const integrations = useQuery({ queryKey: ['integrations'], queryFn: () => client.listIntegrations() })
  return (
    <>
      <h1>Payment providers</h1>
      <p className="muted">
        Stripe, Paddle and Lemon Squeezy send their webhooks here: a purchase makes a customer and a license
        and mails the key, a renewal extends it, a cancellation lets it run to the end of the paid period, a
        refund revokes it.
      </p>
      <CreateIntegrationForm />
      <ProblemMessage error={integrations.error} />
      {integrations.data &&
        (integrations.data.data.length === 0 ? (
          <p>No payment provider is connected.</p>
        ) : (
          <DataTable label="Payment-provider integrations">
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Description</th>
                <th scope="col">Items sold</th>
                <th scope="col">Refunds</th>
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
                  <td>{integration.onRefund === 'revoke' ? 'revoke' : 'keep'}</td>
                </tr>
              ))}
            </tbody>
          </DataTable>
        ))}
    </>
  )
}

function CreateIntegrationForm() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const id = useId()
  const [provider, setProvider] = useState<Provider>('stripe')
  const create = useMutation({
    mutationFn: (form: FormData) =>
      client.createIntegration({
        ...toIntegrationFields(form),
        provider,
        signingSecret: String(form.get('signingSecret') ?? ''),
      }),
    onSuccess: async (integration) => {
      await queryClient.invalidateQueries({ queryKey: ['integrations'] })
      void navigate(`/integrations/${integration.id}`)
    },
  })
  return (
    <details className="create">
      <summary>Add an integration</summary>
      <form
        className="stacked"
        aria-label="Add an integration"
        onSubmit={(event) => {
          event.preventDefault()
          create.mutate(new FormData(event.currentTarget))
        }}
      >
        <label htmlFor={`${id}-provider`}>Provider</label>
        <select
          id={`${id}-provider`}
          name="provider"
          value={provider}
          onChange={(event) => setProvider(event.currentTarget.value as Provider)}
        >
          {Object.entries(providerNames).map(([value, name]) => (
            <option key={value} value={value}>
              {name}
            </option>
          ))}
        </select>
        <label htmlFor={`${id}-secret`}>Webhook signing secret</label>
        <input
          id={`${id}-secret`}
          name="signingSecret"
          type="password"
          autoComplete="off"
          required
          minLength={8}
          maxLength={500}
          aria-describedby={`${id}-secret-help`}
        />
        <p id={`${id}-secret-help`} className="muted">
          From the provider&apos;s webhook settings. Stored encrypted; never shown again.
        </p>
        <IntegrationFieldset key={provider} provider={provider} />
        <div className="actions">
          <Button type="submit" disabled={create.isPending}>
            Add integration
          </Button>
        </div>
        <ProblemMessage error={create.error} />
      </form>
    </details>
  )
}
