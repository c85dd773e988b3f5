import type { LicenseResource, ProductResource } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useSearchParams } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { withParams } from '../components/list-params.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { SortHeader } from '../components/sort-header.js'
import { StatusBadge } from '../components/status-badge.js'
import { Time } from '../components/time.js'
import { Allowed, useSession } from '../session/session.js'
import {
  defaultLicenseSort,
  filterNames,
  licenseListQuery,
  licenseStatuses,
  readLicenseFilters,
} from './license-query.js'

export function LicensesScreen() {
  const { client } = useSession()
  const [search] = useSearchParams()
  const query = licenseListQuery(search)
  const licenses = useQuery({
    queryKey: ['licenses', query],
    // A newer view cancels the request for the one it replaces.
    queryFn: ({ signal }) => client.listLicenses(query, { signal }),
    placeholderData: (previous) => previous,
  })
  const products = useProductChoices()
  return (
    <>
      <div className="title-row">
        <h1>Licenses</h1>
        <Allowed least="admin">
          <Link to="/licenses/offline" className="button">
            Offline activation
          </Link>
          <Link to="/licenses/new" className="button primary">
            Create license
          </Link>
        </Allowed>
      </div>
      <LicenseFilterForm products={products.data?.data} />
      <ProblemMessage error={licenses.error} />
      {licenses.data && (
        <div aria-busy={licenses.isFetching}>
          <LicenseTable licenses={licenses.data.data} products={products.data?.data ?? []} />
          <Pager result={licenses.data} noun="license" />
        </div>
      )}
    </>
  )
}

function LicenseTable({ licenses, products }: { licenses: LicenseResource[]; products: ProductResource[] }) {
  const names = new Map(products.map((product) => [product.id, product.name]))
  const header = (field: string, label: string) => (
    <SortHeader field={field} label={label} defaultSort={defaultLicenseSort} />
  )
  return (
    <DataTable label="Licenses">
      <thead>
        <tr>
          {header('key', 'Key')}
          {header('status', 'Status')}
          <th scope="col">Product</th>
          {header('maxActivations', 'Activations')}
          {header('expirationDate', 'Expires')}
          {header('createdAt', 'Created')}
          {header('updatedAt', 'Updated')}
        </tr>
      </thead>
      <tbody>
        {licenses.map((license) => (
          <tr key={license.id}>
            <td>
              <Link to={`/licenses/${license.id}`}>
                <code>{license.key}</code>
              </Link>
            </td>
            <td>
              <StatusBadge status={license.status} />
            </td>
            <td>{names.get(license.productId) ?? <code>{license.productId}</code>}</td>
            <td>
              {license.activationCount} / {license.maxActivations ?? '∞'}
            </td>
            <td>
              <Time value={license.expirationDate} empty="Never" />
            </td>
            <td>
              <Time value={license.createdAt} />
            </td>
            <td>
              <Time value={license.updatedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </DataTable>
  )
}

function LicenseFilterForm({ products }: { products: ProductResource[] | undefined }) {
  const [search, setSearch] = useSearchParams()
  const filters = readLicenseFilters(search)
  const id = useId()
  return (
    <form
      className="filters"
      aria-label="Filter licenses"
      key={search.toString()}
      onSubmit={(event) => {
        event.preventDefault()
        const form = new FormData(event.currentTarget)
        const changes = Object.fromEntries(filterNames.map((name) => [name, String(form.get(name) ?? '')]))
        setSearch(withParams(search, { ...changes, page: undefined, after: undefined }))
      }}
    >
      <div>
        <label htmlFor={`${id}-status`}>Status</label>
        <select id={`${id}-status`} name="status" defaultValue={filters.status}>
          <option value="">Any</option>
          {licenseStatuses.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-product`}>Product</label>
        {products === undefined ? (
          <input id={`${id}-product`} name="productId" defaultValue={filters.productId} placeholder="prd_…" />
        ) : (
          <select id={`${id}-product`} name="productId" defaultValue={filters.productId}>
            <option value="">Any</option>
            {products.map((product) => (
              <option key={product.id} value={product.id}>
                {product.name}
              </option>
            ))}
          </select>
        )}
      </div>
      <div>
        <label htmlFor={`${id}-from`}>Expires from</label>
        <input id={`${id}-from`} name="expiresFrom" type="date" defaultValue={filters.expiresFrom} />
      </div>
      <div>
        <label htmlFor={`${id}-to`}>Expires until</label>
        <input id={`${id}-to`} name="expiresTo" type="date" defaultValue={filters.expiresTo} />
      </div>
      <div>
        <label htmlFor={`${id}-customer`}>Customer id</label>
        <input
          id={`${id}-customer`}
          name="customerId"
          defaultValue={filters.customerId}
          placeholder="cus_…"
        />
      </div>
      <div>
        <label htmlFor={`${id}-policy`}>Policy id</label>
        <input id={`${id}-policy`} name="policyId" defaultValue={filters.policyId} placeholder="pol_…" />
      </div>
      <div>
        <label htmlFor={`${id}-meta-key`}>Metadata key</label>
        <input id={`${id}-meta-key`} name="metaKey" defaultValue={filters.metaKey} maxLength={40} />
      </div>
      <div>
        <label htmlFor={`${id}-meta-value`}>equals</label>
        <input id={`${id}-meta-value`} name="metaValue" defaultValue={filters.metaValue} />
      </div>
      <div className="actions">
        <Button variant="default" type="submit">
          Apply filters
        </Button>
        <Button
          variant="default"
          type="button"
          onClick={() =>
            setSearch(
              withParams(search, {
                ...Object.fromEntries(filterNames.map((name) => [name, undefined])),
                page: undefined,
                after: undefined,
              }),
            )
          }
        >
          Clear filters
        </Button>
      </div>
    </form>
  )
}
