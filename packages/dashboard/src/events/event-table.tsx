import type { KeyturnClient } from '@keyturn/client'
import { Link } from 'react-router'
import { Time } from '../components/time.js'

type EventResource = Awaited<ReturnType<KeyturnClient['listEvents']>>['data'][number]

function actorOf(event: EventResource): string {
  return 'system' in event.actor ? 'Keyturn' : `${event.actor.role} key ${event.actor.apiKeyId}`
}

/** Where the changed object is shown in the dashboard, when it is. */
function linkOf(event: EventResource): string | undefined {
  const id = typeof event.data.id === 'string' ? event.data.id : undefined
  const licenseId = typeof event.data.licenseId === 'string' ? event.data.licenseId : undefined
  if (event.type.startsWith('license.')) {
    const license = event.data.license as { id?: unknown } | undefined
    const viaResult = typeof license?.id === 'string' ? license.id : undefined
    return `/licenses/${id ?? viaResult ?? ''}`
  }
  if (event.type.startsWith('activation.') && licenseId !== undefined) {
    return `/licenses/${licenseId}`
  }
  if (event.type.startsWith('product.')) {
    return `/products/${id ?? String(event.data.productId ?? '')}`
  }
  return undefined
}

/** Events as a table; each one's data (the object after the change) is shown as text on demand. */
export function EventTable({ events, caption }: { events: EventResource[]; caption: string }) {
  return (
    <table>
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Type</th>
          <th scope="col">By</th>
          <th scope="col">Object</th>
        </tr>
      </thead>
      <tbody>
        {events.map((event) => {
          const link = linkOf(event)
          return (
            <tr key={event.id}>
              <td>
                <Time value={event.occurredAt} />
              </td>
              <td>
                <code>{event.type}</code>
              </td>
              <td>{actorOf(event)}</td>
              <td>
                <details>
                  <summary>{link ? 'Data' : `Data of ${event.id}`}</summary>
                  {link && <Link to={link}>Open the {event.type.split('.')[0]}</Link>}
                  <pre className="data">{JSON.stringify(event.data, null, 2)}</pre>
                </details>
              </td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}
