import type { ProductId, Stats } from '@keyturn/client'
import { NativeSelect } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'react-router'
import { FieldRow } from '../components/form-layout.js'
import { formatTime } from '../components/format.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { ProductLink } from '../components/product-field.js'
import { useSession } from '../session/session.js'
import { BarChart } from './bar-chart.js'
import { LatestFailures } from './latest-failures.js'

const dayMs = 86_400_000
const ranges = [30, 90] as const

/** `YYYY-MM-DD` of the UTC day `days` after `from`. */
function dayAfter(from: Date, days: number): string {
  return new Date(from.getTime() + days * dayMs).toISOString().slice(0, 10)
}

/**
 * The overview's pictures (loaded on demand: the charts' code is not part of the first page):
 * validations, activations, new licenses, sales and payment problems per day over 30 or 90 days,
 * for every product or one, from `GET /stats`; the figures of now, the licenses expiring within 30
 * days, and the latest failures (`GET /stats/failures`).
 */
export function Activity() {
  const { client } = useSession()
  const products = useProductChoices()
  const scoped: string | undefined = undefined
  const [range, setRange] = useState<(typeof ranges)[number]>(30)
  const [chosen, setChosen] = useState('')
  const productId = (scoped ?? (chosen === '' ? undefined : chosen)) as ProductId | undefined
  const stats = useQuery({
    queryKey: ['stats', range, productId ?? 'all'],
    queryFn: () => {
      const today = new Date()
      return client.stats({
        from: dayAfter(today, 1 - range),
        ...(productId === undefined ? {} : { productId }),
      })
    },
  })
  return (
    <section aria-labelledby="activity-heading">
      <h2 id="activity-heading">Activity</h2>
      <form aria-label="Activity shown" onSubmit={(event) => event.preventDefault()}>
        <FieldRow>
          <NativeSelect
            label="Period"
            value={range}
            onChange={(event) => setRange(Number(event.target.value) === 90 ? 90 : 30)}
          >
            {ranges.map((days) => (
              <option key={days} value={days}>
                Last {days} days
              </option>
            ))}
          </NativeSelect>
          {scoped === undefined && products.data && (
            <NativeSelect label="Product" value={chosen} onChange={(event) => setChosen(event.target.value)}>
              <option value="">All products</option>
              {products.data.data.map((product) => (
                <option key={product.id} value={product.id}>
                  {product.name}
                </option>
              ))}
            </NativeSelect>
          )}
        </FieldRow>
      </form>
      <ProblemMessage error={stats.error} />
      {stats.data === undefined ? (
        stats.isPending && <p role="status">Loading activity…</p>
      ) : (
        <ActivityFigures stats={stats.data} />
      )}
      <ExpiringSoon productId={productId} />
      <LatestFailures productId={productId} />
    </section>
  )
}

function ActivityFigures({ stats }: { stats: Stats }) {
  const expiringLink = `/licenses?status=active&expiresFrom=${stats.now.at.slice(0, 10)}&expiresTo=${dayAfter(new Date(stats.now.at), 30)}${stats.productId === null ? '' : `&productId=${stats.productId}`}`
  return (
    <>
      <dl className="cards">
        <div>
          <dt>Active machines</dt>
          <dd>{stats.now.activeMachines.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>
            <Link to={expiringLink}>Expiring within 30 days</Link>
          </dt>
          <dd>{stats.now.licensesExpiringSoon.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Revoked in the period</dt>
          <dd>{stats.totals.licensesRevoked.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Renewed in the period</dt>
          <dd>{stats.totals.licensesRenewed.toLocaleString('en')}</dd>
        </div>
      </dl>
      <h3>Sales through payment providers</h3>
      <dl className="cards" aria-label="Sales through payment providers in the period">
        <div>
          <dt>Licenses sold</dt>
          <dd>{stats.totals.licensesSold.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Subscription renewals</dt>
          <dd>{stats.totals.providerRenewals.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Failed payments</dt>
          <dd>{stats.totals.paymentFailures.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Revoked for a refund</dt>
          <dd>{stats.totals.refundRevocations.toLocaleString('en')}</dd>
        </div>
      </dl>
      <div className="charts">
        <BarChart
          title="Validations per day"
          series={[
            { name: 'valid', className: 'bar-valid' },
            { name: 'not valid', className: 'bar-invalid' },
          ]}
          days={stats.days.map((day) => ({
            date: day.date,
            values: [day.validationsValid, day.validationsInvalid],
          }))}
        />
        <BarChart
          title="Machines per day"
          series={[
            { name: 'activated', className: 'bar-valid' },
            { name: 'deactivated', className: 'bar-invalid' },
          ]}
          days={stats.days.map((day) => ({ date: day.date, values: [day.activations, day.deactivations] }))}
        />
        <BarChart
          title="New licenses per day"
          series={[{ name: 'created', className: 'bar-valid' }]}
          days={stats.days.map((day) => ({ date: day.date, values: [day.licensesCreated] }))}
        />
        <BarChart
          title="Sales per day"
          series={[
            { name: 'sold', className: 'bar-valid' },
            { name: 'renewed', className: 'bar-renewed' },
          ]}
          days={stats.days.map((day) => ({
            date: day.date,
            values: [day.licensesSold, day.providerRenewals],
          }))}
        />
        <BarChart
          title="Payment problems per day"
          series={[
            { name: 'failed payments', className: 'bar-invalid' },
            { name: 'refunded', className: 'bar-refunded' },
          ]}
          days={stats.days.map((day) => ({
            date: day.date,
            values: [day.paymentFailures, day.refundRevocations],
          }))}
        />
      </div>
      <details className="chart-table">
        <summary>The numbers of each day</summary>
        <table>
          <caption>Activity per day (UTC)</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Valid</th>
              <th scope="col">Not valid</th>
              <th scope="col">Activated</th>
              <th scope="col">Deactivated</th>
              <th scope="col">Created</th>
              <th scope="col">Renewed</th>
              <th scope="col">Revoked</th>
              <th scope="col">Sold</th>
              <th scope="col">Renewed (provider)</th>
              <th scope="col">Failed payments</th>
              <th scope="col">Refunded</th>
            </tr>
          </thead>
          <tbody>
            {[...stats.days].reverse().map((day) => (
              <tr key={day.date}>
                <th scope="row">{day.date}</th>
                <td>{day.validationsValid.toLocaleString('en')}</td>
                <td>{day.validationsInvalid.toLocaleString('en')}</td>
                <td>{day.activations.toLocaleString('en')}</td>
                <td>{day.deactivations.toLocaleString('en')}</td>
                <td>{day.licensesCreated.toLocaleString('en')}</td>
                <td>{day.licensesRenewed.toLocaleString('en')}</td>
                <td>{day.licensesRevoked.toLocaleString('en')}</td>
                <td>{day.licensesSold.toLocaleString('en')}</td>
                <td>{day.providerRenewals.toLocaleString('en')}</td>
                <td>{day.paymentFailures.toLocaleString('en')}</td>
                <td>{day.refundRevocations.toLocaleString('en')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <p className="muted">Counts reach these charts within a few seconds; the days are UTC.</p>
    </>
  )
}

/** The next licenses to expire (within 30 days, not revoked), soonest first. */
function ExpiringSoon({ productId }: { productId: ProductId | undefined }) {
  const { client } = useSession()
  const now = new Date()
  const filter = [
    'status:eq:active',
    `expirationDate:lte:${new Date(now.getTime() + 30 * dayMs).toISOString()}`,
    ...(productId === undefined ? [] : [`productId:eq:${productId}`]),
  ].join(',')
  const licenses = useQuery({
    queryKey: ['licenses', 'expiring', productId ?? 'all'],
    queryFn: () => client.listLicenses({ limit: 10, sort: 'expirationDate:asc', filter }),
  })
  return (
    <section aria-labelledby="expiring-heading">
      <h2 id="expiring-heading">Expiring within 30 days</h2>
      <ProblemMessage error={licenses.error} />
      {licenses.data &&
        (licenses.data.data.length === 0 ? (
          <p>No license expires within 30 days.</p>
        ) : (
          <table>
            <caption className="visually-hidden">Licenses expiring within 30 days, soonest first</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Product</th>
                <th scope="col">Expires</th>
              </tr>
            </thead>
            <tbody>
              {licenses.data.data.map((license) => (
                <tr key={license.id}>
                  <td>
                    <Link to={`/licenses/${license.id}`}>
                      <code>{license.key}</code>
                    </Link>
                  </td>
                  <td>
                    <ProductLink id={license.productId} />
                  </td>
                  <td>{formatTime(license.expirationDate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
    </section>
  )
}
