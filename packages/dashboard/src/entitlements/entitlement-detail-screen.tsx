import type { KeyturnClient } from '@keyturn/client'
import { TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useParams } from 'react-router'
import { DeleteSection, DetailScreen, EditSection, useDetailMutations } from '../components/detail-screen.js'
import { Fact, Facts } from '../components/facts.js'
import { ProductLink } from '../components/product-field.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'

type EntitlementId = Parameters<KeyturnClient['getEntitlement']>[0]

export function EntitlementDetailScreen() {
  const { client } = useSession()
  const id = (useParams().id ?? '') as EntitlementId // the route's :id; the API answers 404 for a bad one
  const entitlement = useQuery({ queryKey: ['entitlement', id], queryFn: () => client.getEntitlement(id) })
  const { update, remove } = useDetailMutations({
    update: (form) =>
      client.updateEntitlement(id, {
        code: String(form.get('code') ?? '').trim(),
        name: String(form.get('name') ?? '').trim(),
      }),
    remove: () => client.deleteEntitlement(id),
    back: '/entitlements',
  })
  return (
    <DetailScreen back="/entitlements" backLabel="Entitlements" resource={entitlement}>
      {(data) => (
        <>
          <h1>{data.name}</h1>
          <Facts>
            <Fact term="Code">
              <code>{data.code}</code>
            </Fact>
            <Fact term="Product">
              <ProductLink id={data.productId} />
            </Fact>
            <Fact term="Updated">
              <Time value={data.updatedAt} />
            </Fact>
          </Facts>
          <EditSection version={data.updatedAt} saveLabel="Save entitlement" mutation={update}>
            <TextInput label="Code" name="code" required maxLength={64} defaultValue={data.code} />
            <TextInput label="Name" name="name" required maxLength={200} defaultValue={data.name} />
          </EditSection>
          <DeleteSection noun="entitlement" mutation={remove}>
            <p>
              <code>{data.code}</code> is deleted for good: every license and policy that grants it stops
              granting it.
            </p>
          </DeleteSection>
        </>
      )}
    </DetailScreen>
  )
}
