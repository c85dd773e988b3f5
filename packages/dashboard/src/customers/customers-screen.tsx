import type { KeyturnClient } from '@keyturn/client'
import { Button, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { CreateDisclosure } from '../components/create-disclosure.js'
import { DataTable } from '../components/data-table.js'
import { FieldRow } from '../components/form-layout.js'
import { pagingQuery, readListParams, withParams } from '../components/list-params.js'
import { MetadataField, parseJsonObject } from '../components/metadata.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { SortHeader } from '../components/sort-header.js'
import { Time } from '../components/time.js'
import { Allowed, useSession } from '../session/session.js'

type CreateCustomerBody = Parameters<KeyturnClient['createCustomer']>[0]
const defaultSort = 'createdAt:desc'

function toCreateBody(form: FormData): CreateCustomerBody {
  const name = String(form.get('name') ?? '').trim()
  const metadata = parseJsonObject(form.get('metadata'), 'Metadata')
  return {
    email: String(form.get('email') ?? '').trim(),
    ...(name === '' ? {} : { name }),
    ...(metadata === undefined ? {} : { metadata }),
  }
}

export function CustomersScreen() {
  const { client } = useSession()
  const [search, setSearch] = useSearchParams()
  const email = search.get('email') ?? ''
  const query = {
    ...pagingQuery(readListParams(search)),
    ...(email === '' ? {} : { filter: `email:eq:${email}` }),
  }
  const customers = useQuery({
    queryKey: ['customers', query],
    queryFn: () => client.listCustomers(query),
    placeholderData: (previous) => previous,
  })
  return (
    <>
      <h1>Customers</h1>
      <Allowed least="admin">
        <CreateCustomerForm />
      </Allowed>
      <form
        aria-label="Find customers"
        key={email}
        onSubmit={(event) => {
          event.preventDefault()
          const next = String(new FormData(event.currentTarget).get('email') ?? '').trim()
          setSearch(withParams(search, { email: next, page: undefined, after: undefined }))
        }}
      >
        <FieldRow>
          <TextInput label="Email" name="email" type="email" defaultValue={email} />
          <Button variant="default" type="submit">
            Find
          </Button>
        </FieldRow>
      </form>
      <ProblemMessage error={customers.error} />
      {customers.data && (
        <>
          <DataTable label="Customers">
            <thead>
              <tr>
                <SortHeader field="email" label="Email" defaultSort={defaultSort} />
                <SortHeader field="name" label="Name" defaultSort={defaultSort} />
                <SortHeader field="createdAt" label="Created" defaultSort={defaultSort} />
              </tr>
            </thead>
            <tbody>
              {customers.data.data.map((customer) => (
                <tr key={customer.id}>
                  <td>
                    <Link to={`/customers/${customer.id}`}>{customer.email}</Link>
                  </td>
                  <td>{customer.name ?? '—'}</td>
                  <td>
                    <Time value={customer.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
          <Pager result={customers.data} noun="customer" />
        </>
      )}
    </>
  )
}

function CreateCustomerForm() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const create = useMutation({
    mutationFn: (form: FormData) => client.createCustomer(toCreateBody(form)),
    onSuccess: async (customer) => {
      await queryClient.invalidateQueries()
      void navigate(`/customers/${customer.id}`)
    },
  })
  return (
    <CreateDisclosure summary="Create a customer" submitLabel="Create customer" mutation={create}>
      <TextInput label="Email" name="email" type="email" required maxLength={254} />
      <TextInput label="Name (optional)" name="name" maxLength={200} />
      <MetadataField />
    </CreateDisclosure>
  )
}
