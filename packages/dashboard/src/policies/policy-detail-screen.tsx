import type { KeyturnClient } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { DeleteSection, DetailScreen, EditSection, useDetailMutations } from '../components/detail-screen.js'
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
          <dl className="facts">
            <dt>Id</dt>
            <dd>
              <code>{data.id}</code>
            </dd>
            <dt>Product</dt>
            <dd>
              <ProductLink id={data.productId} />
            </dd>
            <dt>Activations</dt>
            <dd>
              {data.maxActivations ?? 'Unlimited'}
              {data.seatsPerQuantity && data.maxActivations !== null ? ' per seat bought' : ''}
            </dd>
            <dt>Duration</dt>
            <dd>
              {durationInDays(data.duration)}, counted from{' '}
              {data.expirationBasis === 'firstActivation' ? 'the first activation' : 'creation'}
            </dd>
            <dt>Seats</dt>
            <dd>{seatTerms(data.heartbeatTtl)}</dd>
            <dt>Uses</dt>
            <dd>{data.maxUses === null ? 'Unmetered' : `At most ${usesLimit(data.maxUses)}`}</dd>
            <dt>Portal transfers</dt>
            <dd>
              {data.maxTransfers === null
                ? 'Unlimited'
                : `${data.maxTransfers} per ${Math.round(data.transferPeriod / 86_400)} days`}
            </dd>
            <dt>Offline</dt>
            <dd>
              License files{' '}
              {data.licenseFileTtl === null
                ? 'never expire'
                : `last ${durationInDays(data.licenseFileTtl).replace(' days', '')} days`}
              {data.licenseFileMetadata ? ' and carry the metadata' : ''}; tokens up to{' '}
              {data.tokenTtlMax === null ? 'a year' : durationInDays(data.tokenTtlMax)}
            </dd>
            <dt>Check-in</dt>
            <dd>
              {data.checkInInterval === null
                ? 'Not required'
                : `Every ${durationInDays(data.checkInInterval)}, then ${
                    data.gracePeriod === null
                      ? "the application's own grace period"
                      : `${durationInDays(data.gracePeriod)} of grace`
                  }`}
            </dd>
            <dt>Entitlements</dt>
            <dd>{data.entitlements.join(', ') || 'None'}</dd>
            <dt>Metadata</dt>
            <dd>
              <MetadataList metadata={data.metadata} />
            </dd>
            <dt>Licenses</dt>
            <dd>
              <Link to={`/licenses?policyId=${encodeURIComponent(data.id)}`}>Licenses made from it</Link>
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time value={data.updatedAt} />
            </dd>
          </dl>
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
