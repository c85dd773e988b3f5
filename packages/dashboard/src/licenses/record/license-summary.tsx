import type { LicenseResource } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { CopyButton } from '../../components/copy-button.js'
import { seatTerms } from '../../components/format.js'
import { MetadataList } from '../../components/metadata.js'
import { StatusBadge } from '../../components/status-badge.js'
import { Time } from '../../components/time.js'
import { useSession } from '../../session/session.js'
import { SoldThrough } from '../provider-links.js'

/**
 * The license at a glance, at the top of its page: status, product, customer, policy, expiry, seats
 * used of total, usage and where it was sold; the rest (ids, entitlements, metadata, dates) below.
 */
export function LicenseSummary({ license }: { readonly license: LicenseResource }) {
  const { client } = useSession()
  const product = useQuery({
    queryKey: ['product', license.productId],
    queryFn: () => client.getProduct(license.productId),
  })
  const customer = useQuery({
    queryKey: ['customer', license.customerId],
    queryFn: () => client.getCustomer(license.customerId ?? 'cus_'),
    enabled: license.customerId !== null,
  })
  const policy = useQuery({
    queryKey: ['policy', license.policyId],
    queryFn: () => client.getPolicy(license.policyId ?? 'pol_'),
    enabled: license.policyId !== null,
  })
  const seats = license.maxActivations === null ? 'unlimited' : license.maxActivations.toLocaleString('en')
  return (
    <>
      <dl className="summary" aria-label="Summary">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={license.status} />
          </dd>
        </div>
        <div>
          <dt>Product</dt>
          <dd>
            <Link to={`/products/${license.productId}`}>{product.data?.name ?? license.productId}</Link>
          </dd>
        </div>
        <div>
          <dt>Customer</dt>
          <dd>
            {license.customerId === null ? (
              'None'
            ) : (
              <Link to={`/customers/${license.customerId}`}>
                {customer.data?.email ?? license.customerId}
              </Link>
            )}
          </dd>
        </div>
        <div>
          <dt>Policy</dt>
          <dd>
            {license.policyId === null ? (
              'None'
            ) : (
              <Link to={`/policies/${license.policyId}`}>{policy.data?.name ?? license.policyId}</Link>
            )}
          </dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd>
            <Time value={license.expirationDate} empty="Never" />
          </dd>
        </div>
        <div>
          <dt>Seats</dt>
          <dd>
            {license.activationCount.toLocaleString('en')} used, limit {seats}
          </dd>
        </div>
        <div>
          <dt>Usage</dt>
          <dd>
            {license.uses.toLocaleString('en')} used
            {license.maxUses === null ? ' (unmetered)' : `, limit ${license.maxUses.toLocaleString('en')}`}
          </dd>
        </div>
        <SoldThrough license={license} />
      </dl>
      <details className="more-facts">
        <summary>More details</summary>
        <dl className="facts">
          <dt>Key</dt>
          <dd>
            <code>{license.key}</code> <CopyButton value={license.key} label="Copy key" />
          </dd>
          <dt>Id</dt>
          <dd>
            <code>{license.id}</code>
          </dd>
          {license.externalId !== null && (
            <>
              <dt>External id</dt>
              <dd>
                <code>{license.externalId}</code>
              </dd>
            </>
          )}
          <dt>Seat terms</dt>
          <dd>{seatTerms(license.heartbeatTtl)}</dd>
          <dt>Entitlements</dt>
          <dd>{license.entitlements.join(', ') || 'None'}</dd>
          <dt>Metadata</dt>
          <dd>
            <MetadataList metadata={license.metadata} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time value={license.createdAt} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time value={license.updatedAt} />
          </dd>
        </dl>
      </details>
    </>
  )
}
