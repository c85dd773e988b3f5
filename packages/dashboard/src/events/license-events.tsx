import type { LicenseResource } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { ProblemMessage } from '../components/problem-message.js'
import { useSession } from '../session/session.js'
import { EventTable } from './event-table.js'

const eventWindow = 100

/** Whether an event is about `licenseId`: the license itself, a validation of it, or one of its activations. */
function isAbout(licenseId: string, data: Record<string, unknown>): boolean {
  const license = data.license as { id?: unknown } | undefined
  return data.id === licenseId || data.licenseId === licenseId || license?.id === licenseId
}

/**
 * A license's recent events. The API filters events by product, not by license, so this reads one
 * page (the product's latest 100) and keeps the license's own: older ones are in the events log.
 */
export function LicenseEvents({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const events = useQuery({
    queryKey: ['events', 'product', license.productId],
    queryFn: () => client.listEvents({ limit: eventWindow, filter: `productId:eq:${license.productId}` }),
  })
  const own = (events.data?.data ?? []).filter((event) => isAbout(license.id, event.data))
  return (
    <section aria-labelledby="license-events">
      <h2 id="license-events">Recent events</h2>
      <ProblemMessage error={events.error} />
      {events.data &&
        (own.length === 0 ? (
          <p>None among the product&apos;s latest {eventWindow} events.</p>
        ) : (
          <EventTable events={own} caption="Recent events of this license" />
        ))}
    </section>
  )
}
