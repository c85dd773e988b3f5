import type { KeyturnClient } from '@keyturn/client'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'
import { describeActor, describeEvent } from './describe-event.js'

type EventResource = Awaited<ReturnType<KeyturnClient['listEvents']>>['data'][number]

/**
 * Events as a table: each row says what happened to which object, linked to it, by whom; the
 * event's data (the object after the change) is shown as JSON on demand.
 */
export function EventTable({ events, caption }: { events: EventResource[]; caption: string }) {
  // Events name operators by id only: their names are read when shown.
  const { client } = useSession()
  const operators = useQuery({ queryKey: ['operators'], queryFn: () => client.listOperators() })
  const operatorNames = new Map(
    (operators.data?.data ?? []).map((operator) => [operator.id, `${operator.name} <${operator.email}>`]),
  )
  return (
    <DataTable label={caption}>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">What happened</th>
          <th scope="col">By</th>
          <th scope="col">Data</th>
        </tr>
      </thead>
      <tbody>
        {events.map((event) => {
          const { text, link } = describeEvent(event)
          return (
            <tr key={event.id}>
              <td>
                <Time value={event.occurredAt} />
              </td>
              <td>
                {link === undefined ? text : <Link to={link}>{text}</Link>}
                <br />
                <code className="muted">{event.type}</code>
              </td>
              <td>{describeActor(event.actor, operatorNames)}</td>
              <td>
                <details>
                  <summary>
                    Data<span className="visually-hidden"> of {event.id}</span>
                  </summary>
                  <pre className="data">{JSON.stringify(event.data, null, 2)}</pre>
                </details>
              </td>
            </tr>
          )
        })}
      </tbody>
    </DataTable>
  )
}
