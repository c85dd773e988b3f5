import type { KeyturnClient } from '@keyturn/client'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { CreateDisclosure } from '../components/create-disclosure.js'
import { DataTable } from '../components/data-table.js'
import { seatLease, usesLimit } from '../components/format.js'
import { pagingQuery, readListParams } from '../components/list-params.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { ProductField, useProductNames } from '../components/product-field.js'
import { SortHeader } from '../components/sort-header.js'
import { Time } from '../components/time.js'
import { Allowed, useSession } from '../session/session.js'
import { durationInDays, PolicyFieldset, toPolicyFields } from './policy-form.js'

type ProductId = Parameters<KeyturnClient['getProduct']>[0]
const defaultSort = 'createdAt:desc'

export function PoliciesScreen() {
  const { client } = useSession()
  const [search] = useSearchParams()
  const query = pagingQuery(readListParams(search))
  const policies = useQuery({
    queryKey: ['policies', query],
    queryFn: () => client.listPolicies(query),
    placeholderData: (previous) => previous,
  })
  const names = useProductNames()
  return (
    <>
      <h1>Policies</h1>
      <p className="muted">Templates for licenses: activations, duration, entitlements and metadata.</p>
      <Allowed least="admin">
        <CreatePolicyForm />
      </Allowed>
      <ProblemMessage error={policies.error} />
      {policies.data && (
        <>
          <DataTable label="Policies">
            <thead>
              <tr>
                <SortHeader field="name" label="Name" defaultSort={defaultSort} />
                <th scope="col">Product</th>
                <th scope="col">Activations</th>
                <th scope="col">Duration</th>
                <th scope="col">Seat lease</th>
                <th scope="col">Max uses</th>
                <th scope="col">Entitlements</th>
                <SortHeader field="createdAt" label="Created" defaultSort={defaultSort} />
              </tr>
            </thead>
            <tbody>
              {policies.data.data.map((policy) => (
                <tr key={policy.id}>
                  <td>
                    <Link to={`/policies/${policy.id}`}>{policy.name}</Link>
                  </td>
                  <td>{names.get(policy.productId) ?? <code>{policy.productId}</code>}</td>
                  <td>{policy.maxActivations ?? 'Unlimited'}</td>
                  <td>{durationInDays(policy.duration)}</td>
                  <td>{seatLease(policy.heartbeatTtl)}</td>
                  <td>{usesLimit(policy.maxUses)}</td>
                  <td>{policy.entitlements.join(', ') || '—'}</td>
                  <td>
                    <Time value={policy.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
          <Pager result={policies.data} noun="policy" />
        </>
      )}
    </>
  )
}

function CreatePolicyForm() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const id = useId()
  const create = useMutation({
    mutationFn: (form: FormData) =>
      client.createPolicy({
        productId: String(form.get('productId') ?? '') as ProductId, // the API checks it
        ...toPolicyFields(form),
      }),
    onSuccess: async (policy) => {
      await queryClient.invalidateQueries()
      void navigate(`/policies/${policy.id}`)
    },
  })
  return (
    <CreateDisclosure summary="Create a policy" submitLabel="Create policy" mutation={create}>
      <ProductField id={`${id}-product`} />
      <PolicyFieldset />
    </CreateDisclosure>
  )
}
