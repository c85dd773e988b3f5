import type { KeyturnClient } from '@keyturn/client'
import { TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { DeleteSection, DetailScreen, EditSection, useDetailMutations } from '../components/detail-screen.js'
import { Fact, Facts } from '../components/facts.js'
import { MetadataField, MetadataList, parseJsonObject } from '../components/metadata.js'
import { Time } from '../components/time.js'
import { may, useSession } from '../session/session.js'
import { PortalSessionsSection } from './portal-sessions.js'

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
  const session = useSession()
  const { client } = session
  const id = (useParams().id ?? '') as CustomerId // the route's :id; the API answers 404 for a bad one
  const customer = useQuery({ queryKey: ['customer', id], queryFn: () => client.getCustomer(id) })
  const licenses = useQuery({
    queryKey: ['count', 'licenses', 'customer', id],
    queryFn: () => client.listLicenses({ limit: 1, filter: `customerId:eq:${id}` }),
  })
  const { update, remove } = useDetailMutations({
    update: (form) => client.updateCustomer(id, toUpdateBody(form)),
    remove: () => client.deleteCustomer(id),
    back: '/customers',
  })
  return (
    <DetailScreen back="/customers" backLabel="Customers" resource={customer}>
      {(data) => (
        <>
          <h1>{data.name ?? data.email}</h1>
          <Facts>
            <Fact term="Email">{data.email}</Fact>
            <Fact term="Id">
              <code>{data.id}</code>
            </Fact>
            <Fact term="Licenses">
              <Link to={`/licenses?customerId=${encodeURIComponent(data.id)}`}>
                {licenses.data ? `${licenses.data.totalCount.toLocaleString('en')} licenses` : 'Licenses'}
              </Link>
            </Fact>
            <Fact term="Metadata">
              <MetadataList metadata={data.metadata} />
            </Fact>
            <Fact term="Created">
              <Time value={data.createdAt} />
            </Fact>
            <Fact term="Updated">
              <Time value={data.updatedAt} />
            </Fact>
          </Facts>
          <EditSection version={data.updatedAt} saveLabel="Save customer" mutation={update}>
            <TextInput
              label="Email"
              name="email"
              type="email"
              required
              maxLength={254}
              defaultValue={data.email}
            />
            <TextInput
              label="Name (empty: none)"
              name="name"
              maxLength={200}
              defaultValue={data.name ?? ''}
            />
            <MetadataField />
          </EditSection>
          {may(session, 'support') && <PortalSessionsSection customerId={data.id} />}
          <DeleteSection noun="customer" mutation={remove}>
            <p>
              <strong>{data.email}</strong> is deleted for good. A customer who still owns licenses cannot be
              deleted: detach or delete those first.
            </p>
          </DeleteSection>
        </>
      )}
    </DetailScreen>
  )
}
