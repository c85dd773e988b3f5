import type { CreatedApiKeyResource, KeyturnClient } from '@keyturn/client'
import { Button, NativeSelect, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useSearchParams } from 'react-router'
import { ConfirmButton } from '../components/confirm-button.js'
import { DataTable } from '../components/data-table.js'
import { FieldRow } from '../components/form-layout.js'
import { pagingQuery, readListParams } from '../components/list-params.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { ProductField, useProductNames } from '../components/product-field.js'
import { SecretPanel } from '../components/secret-panel.js'
import { SortHeader } from '../components/sort-header.js'
import { Time } from '../components/time.js'
import { isAdmin, useSession } from '../session/session.js'

type CreateApiKeyBody = Parameters<KeyturnClient['createApiKey']>[0]
const defaultSort = 'createdAt:desc'

/** Everyone reads the keys (never their secrets); admins and owners create and delete them. */
export function ApiKeysScreen() {
  const session = useSession()
  const { client } = session
  const [search] = useSearchParams()
  const query = pagingQuery(readListParams(search))
  const apiKeys = useQuery({
    queryKey: ['api-keys', query],
    queryFn: () => client.listApiKeys(query),
    placeholderData: (previous) => previous,
  })
  const names = useProductNames()
  const queryClient = useQueryClient()
  const remove = useMutation({
    mutationFn: (id: Parameters<KeyturnClient['deleteApiKey']>[0]) => client.deleteApiKey(id),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  return (
    <>
      <h1>API keys</h1>
      {isAdmin(session) && <CreateApiKeyForm />}
      <ProblemMessage error={apiKeys.error ?? remove.error} />
      {apiKeys.data && (
        <>
          <DataTable label="API keys">
            <thead>
              <tr>
                <SortHeader field="name" label="Name" defaultSort={defaultSort} />
                <th scope="col">Role</th>
                <th scope="col">Product</th>
                <th scope="col">Starts with</th>
                <SortHeader field="createdAt" label="Created" defaultSort={defaultSort} />
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {apiKeys.data.data.map((apiKey) => (
                <tr key={apiKey.id}>
                  <td>{apiKey.name}</td>
                  <td>{apiKey.role}</td>
                  <td>
                    {apiKey.productId === null ? 'All' : (names.get(apiKey.productId) ?? apiKey.productId)}
                  </td>
                  <td>
                    <code>{apiKey.prefix}…</code>
                  </td>
                  <td>
                    <Time value={apiKey.createdAt} />
                  </td>
                  <td>
                    {isAdmin(session) && (
                      <ConfirmButton
                        label={`Delete ${apiKey.name}`}
                        title="Delete this API key?"
                        confirmLabel="Delete key"
                        danger
                        onConfirm={() => remove.mutate(apiKey.id)}
                      >
                        <p>
                          Everything using <strong>{apiKey.name}</strong> (<code>{apiKey.prefix}…</code>) is
                          refused from now on. This cannot be undone.
                        </p>
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
          <Pager result={apiKeys.data} noun="API key" />
        </>
      )}
    </>
  )
}

function CreateApiKeyForm() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const [role, setRole] = useState<CreateApiKeyBody['role']>('product')
  const [created, setCreated] = useState<CreatedApiKeyResource>()
  const create = useMutation({
    mutationFn: (body: CreateApiKeyBody) => client.createApiKey(body),
    onSuccess: async (apiKey) => {
      setCreated(apiKey)
      await queryClient.invalidateQueries({ queryKey: ['api-keys'] })
    },
  })
  if (created !== undefined) {
    return (
      <SecretPanel
        title={`New API key “${created.name}”`}
        secret={created.secret}
        warning={
          <>
            <strong>Copy this secret now. It is shown only once:</strong> Keyturn keeps only a digest and
            cannot show it again.
          </>
        }
        onDismiss={() => {
          setCreated(undefined)
          create.reset() // drops the secret from memory too
        }}
      />
    )
  }
  return (
    <form
      aria-labelledby={`${id}-heading`}
      onSubmit={(event) => {
        event.preventDefault()
        const form = new FormData(event.currentTarget)
        const productId = String(form.get('productId') ?? '')
        create.mutate({
          name: String(form.get('name') ?? ''),
          role,
          ...(role === 'admin' ? {} : { productId: productId as NonNullable<CreateApiKeyBody['productId']> }),
        })
      }}
    >
      <h2 id={`${id}-heading`}>Create an API key</h2>
      <FieldRow>
        <TextInput label="Name" name="name" required maxLength={200} />
        <NativeSelect
          label="Role"
          name="role"
          value={role}
          onChange={(event) => setRole(event.currentTarget.value as CreateApiKeyBody['role'])} // the options below
        >
          <option value="product">product: manages one product&apos;s licenses</option>
          <option value="client">client: for applications (validate, activate, tokens)</option>
          <option value="admin">admin: everything</option>
        </NativeSelect>
        {role !== 'admin' && <ProductField id={`${id}-product`} />}
        <Button type="submit" disabled={create.isPending}>
          Create API key
        </Button>
      </FieldRow>
      <ProblemMessage error={create.error} />
    </form>
  )
}
