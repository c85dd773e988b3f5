import type { LicenseResource } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { useSession } from '../session/session.js'
import { EventTable } from './event-table.js'

const recentEvents = 10

/**
 * A license's latest events (its own, its validations' and its activations'), read with the API's
 * `licenseId` filter: one short page, the rest in the event log, linked with the same filter.
 */
export function LicenseEvents({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const events = useQuery({
    queryKey: ['events', 'license', license.id],
    queryFn: () => client.listEvents({ limit: recentEvents, filter: `licenseId:eq:${license.id}` }),
  })
  return (
    <section aria-labelledby="license-events">
      <h2 id="license-events">Recent events</h2>
      <ProblemMessage error={events.error} />
      {events.data &&
        (events.data.totalCount === 0 ? (
          <p>None recorded.</p>
        ) : (
          <>
            <EventTable events={events.data.data} caption="Recent events of this license" />
            {events.data.totalCount > events.data.data.length && (
              <Link to={`/events?licenseId=${encodeURIComponent(license.id)}`}>
                All {events.data.totalCount.toLocaleString('en')} events of this license
              </Link>
            )}
          </>
        ))}
    </section>
  )
}
