import type { KeyturnClient } from '@keyturn/client'
import { NativeSelect, PasswordInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { CreateDisclosure } from '../components/create-disclosure.js'
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
    <CreateDisclosure summary="Add an integration" submitLabel="Add integration" mutation={create}>
      <NativeSelect
        label="Provider"
        name="provider"
        value={provider}
        onChange={(event) => setProvider(event.currentTarget.value as Provider)}
        data={Object.entries(providerNames).map(([value, label]) => ({ value, label }))}
      />
      <PasswordInput
        label="Webhook signing secret"
        name="signingSecret"
        autoComplete="off"
        required
        minLength={8}
        maxLength={500}
        description="From the provider's webhook settings. Stored encrypted; never shown again."
      />
      <IntegrationFieldset key={provider} provider={provider} />
    </CreateDisclosure>
  )
}
