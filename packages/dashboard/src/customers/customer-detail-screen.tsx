import type { KeyturnClient } from '@keyturn/client'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { ConfirmButton } from '../components/confirm-button.js'
import { MetadataField, MetadataList, parseJsonObject } from '../components/metadata.js'
import { ProblemMessage } from '../components/problem-message.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'

type CustomerId = Parameters<KeyturnClient['getCustomer']>[0]
type UpdateCustomerBody = Parameters<KeyturnClient['updateCustomer']>[1]

function toUpdateBody(form: FormData): UpdateCustomerBody {
  const name = String(form.get('name') ?? '').trim()
  const metadata = parseJsonObject(form.get('metadata'), 'Metadata')
  return {
    email: String(form.get('email') ?? '').trim(),
    name: name === '' ? null : name,
    ...(metadata === undefined ? {} : { metadata }),
  }
}

export function CustomerDetailScreen() {
  const { client } = useSession()
  const id = (useParams().id ?? '') as CustomerId // the route's :id; the API answers 404 for a bad one
  const customer = useQuery({ queryKey: ['customer', id], queryFn: () => client.getCustomer(id) })
  const licenses = useQuery({
    queryKey: ['count', 'licenses', 'customer', id],
    queryFn: () => client.listLicenses({ limit: 1, filter: `customerId:eq:${id}` }),
  })
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const formId = useId()
  const update = useMutation({
    mutationFn: (form: FormData) => client.updateCustomer(id, toUpdateBody(form)),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  const remove = useMutation({
    mutationFn: () => client.deleteCustomer(id),
    onSuccess: async () => {
      await queryClient.invalidateQueries()
      void navigate('/customers')
    },
  })
  return (
    <>
      <p>
        <Link to="/customers">← Customers</Link>
      </p>
      <ProblemMessage error={customer.error} />
      {customer.data && (
        <>
          <h1>{customer.data.name ?? customer.data.email}</h1>
          <dl className="facts">
            <dt>Email</dt>
            <dd>{customer.data.email}</dd>
            <dt>Id</dt>
            <dd>
              <code>{customer.data.id}</code>
            </dd>
            <dt>Licenses</dt>
            <dd>
              <Link to={`/licenses?customerId=${encodeURIComponent(customer.data.id)}`}>
                {licenses.data ? `${licenses.data.totalCount.toLocaleString('en')} licenses` : 'Licenses'}
              </Link>
            </dd>
            <dt>Metadata</dt>
            <dd>
              <MetadataList metadata={customer.data.metadata} />
            </dd>
            <dt>Created</dt>
            <dd>
              <Time value={customer.data.createdAt} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time value={customer.data.updatedAt} />
            </dd>
          </dl>
          <section aria-labelledby={`${formId}-heading`}>
            <h2 id={`${formId}-heading`}>Edit</h2>
            <form
              className="stacked"
              aria-labelledby={`${formId}-heading`}
              key={customer.data.updatedAt}
              onSubmit={(event) => {
                event.preventDefault()
                update.mutate(new FormData(event.currentTarget))
              }}
            >
              <label htmlFor={`${formId}-email`}>Email</label>
              <input
                id={`${formId}-email`}
                name="email"
                type="email"
                required
                maxLength={254}
                defaultValue={customer.data.email}
              />
              <label htmlFor={`${formId}-name`}>Name (empty: none)</label>
              <input
                id={`${formId}-name`}
                name="name"
                maxLength={200}
                defaultValue={customer.data.name ?? ''}
              />
              <MetadataField />
              <div className="actions">
                <button type="submit" disabled={update.isPending}>
                  Save customer
                </button>
              </div>
              <ProblemMessage error={update.error} />
              {update.isSuccess && <p role="status">Saved.</p>}
            </form>
          </section>
          <section aria-label="Delete">
            <ConfirmButton
              label="Delete customer"
              title="Delete this customer?"
              confirmLabel="Delete customer"
              danger
              onConfirm={() => remove.mutate()}
            >
              <p>
                <strong>{customer.data.email}</strong> is deleted for good. A customer who still owns licenses
                cannot be deleted: detach or delete those first.
              </p>
            </ConfirmButton>
            <ProblemMessage error={remove.error} />
          </section>
        </>
      )}
    </>
  )
}
