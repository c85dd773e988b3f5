import { Button, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { FieldRow } from '../components/form-layout.js'
import { pagingQuery, readListParams } from '../components/list-params.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { SortHeader } from '../components/sort-header.js'
import { StatusBadge } from '../components/status-badge.js'
import { Time } from '../components/time.js'
import { isAdmin, useSession } from '../session/session.js'

const defaultSort = 'createdAt:desc'

export function ProductsScreen() {
  const session = useSession()
  const [search] = useSearchParams()
  const query = pagingQuery(readListParams(search))
  const products = useQuery({
    queryKey: ['products', query],
    queryFn: () => session.client.listProducts(query),
    placeholderData: (previous) => previous,
  })
  return (
    <>
      <h1>Products</h1>
      {isAdmin(session) && <CreateProductForm />}
      <ProblemMessage error={products.error} />
      {products.data && (
        <>
          <DataTable label="Products">
            <thead>
              <tr>
                <SortHeader field="name" label="Name" defaultSort={defaultSort} />
                <th scope="col">Status</th>
                <th scope="col">Id</th>
                <SortHeader field="createdAt" label="Created" defaultSort={defaultSort} />
                <SortHeader field="updatedAt" label="Updated" defaultSort={defaultSort} />
              </tr>
            </thead>
            <tbody>
              {products.data.data.map((product) => (
                <tr key={product.id}>
                  <td>
                    <Link to={`/products/${product.id}`}>{product.name}</Link>
                  </td>
                  <td>
                    <StatusBadge status={product.status} />
                  </td>
                  <td>
                    <code>{product.id}</code>
                  </td>
                  <td>
                    <Time value={product.createdAt} />
                  </td>
                  <td>
                    <Time value={product.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </DataTable>
          <Pager result={products.data} noun="product" />
        </>
      )}
    </>
  )
}

function CreateProductForm() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const id = useId()
  const create = useMutation({
    mutationFn: (name: string) => client.createProduct({ name }),
    onSuccess: async (product) => {
      await queryClient.invalidateQueries()
      void navigate(`/products/${product.id}`)
    },
  })
  return (
    <form
      aria-labelledby={`${id}-heading`}
      onSubmit={(event) => {
        event.preventDefault()
        create.mutate(String(new FormData(event.currentTarget).get('name') ?? ''))
      }}
    >
      <h2 id={`${id}-heading`}>Create a product</h2>
      <FieldRow>
        <TextInput label="Name" name="name" required maxLength={200} />
        <Button type="submit" disabled={create.isPending}>
          Create product
        </Button>
      </FieldRow>
      <ProblemMessage error={create.error} />
    </form>
  )
}
