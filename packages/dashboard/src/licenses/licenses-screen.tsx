import type { LicenseResource, ProductResource } from '@keyturn/client'
import { Button, Group, NativeSelect, TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link, useSearchParams } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { FilterBar } from '../components/filter-bar.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { ProductField } from '../components/product-field.js'
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
          <Group gap="xs">
            <Button component={Link} to="/licenses/offline" variant="default">
              Offline activation
            </Button>
            <Button component={Link} to="/licenses/new">
              Create license
            </Button>
          </Group>
        </Allowed>
      </div>
      <LicenseFilterForm />
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

function LicenseFilterForm() {
  const [search] = useSearchParams()
  const filters = readLicenseFilters(search)
  return (
    <FilterBar label="Filter licenses" names={filterNames}>
      <NativeSelect
        label="Status"
        name="status"
        defaultValue={filters.status}
        data={[{ value: '', label: 'Any' }, ...licenseStatuses]}
      />
      <ProductField any="Any" defaultValue={filters.productId} />
      <TextInput label="Expires from" name="expiresFrom" type="date" defaultValue={filters.expiresFrom} />
      <TextInput label="Expires until" name="expiresTo" type="date" defaultValue={filters.expiresTo} />
      <TextInput
        label="Customer id"
        name="customerId"
        defaultValue={filters.customerId}
        placeholder="cus_…"
      />
      <TextInput label="Policy id" name="policyId" defaultValue={filters.policyId} placeholder="pol_…" />
      <TextInput label="Metadata key" name="metaKey" defaultValue={filters.metaKey} maxLength={40} />
      <TextInput label="equals" name="metaValue" defaultValue={filters.metaValue} />
    </FilterBar>
  )
}
