import { useQueries, useQuery } from '@tanstack/react-query'
import { lazy, Suspense } from 'react'
import { Link } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { EventTable } from '../events/event-table.js'
import { useSession } from '../session/session.js'

const licenseStatuses = ['active', 'expired', 'revoked'] as const

/** The charts load after the first page: their code is not in the initial JavaScript. */
const Activity = lazy(async () => ({ default: (await import('./activity.js')).Activity }))

/** Counts (each one list request with limit=1, read from its totalCount), the activity charts, the latest events. */
export function OverviewScreen() {
  const { client } = useSession()
  const counts = useQueries({
    queries: [
      { queryKey: ['count', 'products'], queryFn: () => client.listProducts({ limit: 1 }) },
      { queryKey: ['count', 'licenses'], queryFn: () => client.listLicenses({ limit: 1 }) },
      { queryKey: ['count', 'activations'], queryFn: () => client.listAllActivations({ limit: 1 }) },
      ...licenseStatuses.map((status) => ({
        queryKey: ['count', 'licenses', status],
        queryFn: () => client.listLicenses({ limit: 1, filter: `status:eq:${status}` }),
      })),
    ],
  })
  const [products, licenses, activations, ...byStatus] = counts
  const failed = counts.find((count) => count.isError)
  const show = (count: { data?: { totalCount: number } } | undefined) =>
    count?.data === undefined ? '…' : count.data.totalCount.toLocaleString('en')
  return (
    <>
      <h1>Overview</h1>
      <ProblemMessage error={failed?.error} />
      <section aria-labelledby="counts-heading">
        <h2 id="counts-heading">Counts</h2>
        <dl className="cards">
          <div>
            <dt>
              <Link to="/products">Products</Link>
            </dt>
            <dd>{show(products)}</dd>
          </div>
          <div>
            <dt>
              <Link to="/licenses">Licenses</Link>
            </dt>
            <dd>{show(licenses)}</dd>
          </div>
          {licenseStatuses.map((status, index) => (
            <div key={status}>
              <dt>
                <Link to={`/licenses?status=${status}`}>
                  {status[0]?.toUpperCase()}
                  {status.slice(1)} licenses
                </Link>
              </dt>
              <dd>{show(byStatus[index])}</dd>
            </div>
          ))}
          <div>
            <dt>Activations</dt>
            <dd>{show(activations)}</dd>
          </div>
        </dl>
      </section>
      <Suspense fallback={<p role="status">Loading activity…</p>}>
        <Activity />
      </Suspense>
      <LatestEvents />
    </>
  )
}

function LatestEvents() {
  const { client } = useSession()
  const events = useQuery({ queryKey: ['events', 'latest'], queryFn: () => client.listEvents({ limit: 5 }) })
  return (
    <section aria-labelledby="latest-events">
      <h2 id="latest-events">Latest events</h2>
      <ProblemMessage error={events.error} />
      {events.data &&
        (events.data.totalCount === 0 ? (
          <p>Nothing has happened yet.</p>
        ) : (
          <>
            <EventTable events={events.data.data} caption="Latest events" />
            <Link to="/events">All events</Link>
          </>
        ))}
    </section>
  )
}
