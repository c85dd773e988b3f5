import type { KeyturnClient } from '@keyturn/client'
import { TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useSearchParams } from 'react-router'
import { CreateDisclosure } from '../components/create-disclosure.js'
import { DataTable } from '../components/data-table.js'
import { pagingQuery, readListParams } from '../components/list-params.js'
import { notifyDone } from '../components/notify.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { ProductField, useProductNames } from '../components/product-field.js'
import { SortHeader } from '../components/sort-header.js'
import { Time } from '../components/time.js'
import { Allowed, useSession } from '../session/session.js'

type CreateEntitlementBody = Parameters<KeyturnClient['createEntitlement']>[0]
const defaultSort = 'createdAt:desc'

export function EntitlementsScreen() {
  const { client } = useSession()
  const [search] = useSearchParams()
  const query = pagingQuery(readListParams(search))
  const entitlements = useQuery({
    queryKey: ['entitlements', query],
    queryFn: () => client.listEntitlements(query),
    placeholderData: (previous) => previous,
  })
  const names = useProductNames()
  return (
    <>
      <h1>Entitlements</h1>
      <p className="muted">
        Features a license may unlock, by code; applications check them in validation and in tokens.
      </p>
      <Allowed least="admin">
        <CreateEntitlementForm />
      </Allowed>
      <ProblemMessage error={entitlements.error} />
      {entitlements.data && (
        <>
          <DataTable label="Entitlements">
            <thead>
              <tr>
                <SortHeader field="code" label="Code" defaultSort={defaultSort} />
                <SortHeader field="name" label="Name" defaultSort={defaultSort} />
                <th scope="col">Product</th>
                <SortHeader field="createdAt" label="Created" defaultSort={defaultSort} />
              </tr>
            </thead>
            <tbody>
              {entitlements.data.data.map((entitlement) => (
                <tr key={entitlement.id}>
                  <td>
                    <Link to={`/entitlements/${entitlement.id}`}>
                      <code>{entitlement.code}</code>
                    </Link>
                  </td>
                  <td>{entitlement.name}</td>
                  <td>{names.get(entitlement.productId) ?? <code>{entitlement.productId}</code>}</td>
                  <td>
                    <Time value={entitlement.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
          <Pager result={entitlements.data} noun="entitlement" />
        </>
      )}
    </>
  )
}

function CreateEntitlementForm() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const create = useMutation({
    mutationFn: (form: FormData) =>
      client.createEntitlement({
        productId: String(form.get('productId') ?? '') as CreateEntitlementBody['productId'], // the API checks it
        code: String(form.get('code') ?? '').trim(),
        name: String(form.get('name') ?? '').trim(),
      }),
    onSuccess: (created) => {
      notifyDone(`Created ${created.code}.`)
      return queryClient.invalidateQueries()
    },
  })
  return (
    <CreateDisclosure summary="Create an entitlement" submitLabel="Create entitlement" mutation={create}>
      <ProductField id={`${id}-product`} />
      <TextInput
        label="Code"
        name="code"
        required
        maxLength={64}
        pattern="[a-z0-9][a-z0-9._\-]{0,63}"
        description={
          <>
            Lower-case letters, digits, <code>.</code>, <code>_</code> and <code>-</code>, e.g.{' '}
            <code>export-pdf</code>.
          </>
        }
      />
      <TextInput label="Name" name="name" required maxLength={200} />
    </CreateDisclosure>
  )
}
