import type { KeyturnClient } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { DeleteSection, DetailScreen, EditSection, useDetailMutations } from '../components/detail-screen.js'
import { Fact, Facts } from '../components/facts.js'
import { seatTerms, usesLimit } from '../components/format.js'
import { MetadataList } from '../components/metadata.js'
import { ProductLink } from '../components/product-field.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'
import { durationInDays, PolicyFieldset, toPolicyFields } from './policy-form.js'

type PolicyId = Parameters<KeyturnClient['getPolicy']>[0]

export function PolicyDetailScreen() {
  const { client } = useSession()
  const id = (useParams().id ?? '') as PolicyId // the route's :id; the API answers 404 for a bad one
  const policy = useQuery({ queryKey: ['policy', id], queryFn: () => client.getPolicy(id) })
  const { update, remove } = useDetailMutations({
    update: (form) => client.updatePolicy(id, toPolicyFields(form)),
    remove: () => client.deletePolicy(id),
    back: '/policies',
  })
  return (
    <DetailScreen back="/policies" backLabel="Policies" resource={policy}>
      {(data) => (
        <>
          <h1>{data.name}</h1>
          <Facts>
            <Fact term="Id">
              <code>{data.id}</code>
            </Fact>
            <Fact term="Product">
              <ProductLink id={data.productId} />
            </Fact>
            <Fact term="Activations">
              {data.maxActivations ?? 'Unlimited'}
              {data.seatsPerQuantity && data.maxActivations !== null ? ' per seat bought' : ''}
            </Fact>
            <Fact term="Duration">
              {durationInDays(data.duration)}, counted from{' '}
              {data.expirationBasis === 'firstActivation' ? 'the first activation' : 'creation'}
            </Fact>
            <Fact term="Seats">{seatTerms(data.heartbeatTtl)}</Fact>
            <Fact term="Uses">
              {data.maxUses === null ? 'Unmetered' : `At most ${usesLimit(data.maxUses)}`}
            </Fact>
            <Fact term="Portal transfers">
              {data.maxTransfers === null
                ? 'Unlimited'
                : `${data.maxTransfers} per ${Math.round(data.transferPeriod / 86_400)} days`}
            </Fact>
            <Fact term="Offline">
              License files{' '}
              {data.licenseFileTtl === null
                ? 'never expire'
                : `last ${durationInDays(data.licenseFileTtl).replace(' days', '')} days`}
              {data.licenseFileMetadata ? ' and carry the metadata' : ''}; tokens up to{' '}
              {data.tokenTtlMax === null ? 'a year' : durationInDays(data.tokenTtlMax)}
            </Fact>
            <Fact term="Check-in">
              {data.checkInInterval === null
                ? 'Not required'
                : `Every ${durationInDays(data.checkInInterval)}, then ${
                    data.gracePeriod === null
                      ? "the application's own grace period"
                      : `${durationInDays(data.gracePeriod)} of grace`
                  }`}
            </Fact>
            <Fact term="Entitlements">{data.entitlements.join(', ') || 'None'}</Fact>
            <Fact term="Metadata">
              <MetadataList metadata={data.metadata} />
            </Fact>
            <Fact term="Licenses">
              <Link to={`/licenses?policyId=${encodeURIComponent(data.id)}`}>Licenses made from it</Link>
            </Fact>
            <Fact term="Updated">
              <Time value={data.updatedAt} />
            </Fact>
          </Facts>
          <EditSection
            version={data.updatedAt}
            saveLabel="Save policy"
            mutation={update}
            note="Changes apply to licenses created from now on."
          >
            <PolicyFieldset policy={data} />
          </EditSection>
          <DeleteSection noun="policy" mutation={remove}>
            <p>
              <strong>{data.name}</strong> is deleted for good. A policy licenses were made from cannot be
              deleted.
            </p>
          </DeleteSection>
        </>
      )}
    </DetailScreen>
  )
}
