import type { KeyturnClient } from '@keyturn/client'
import { useQueries, useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { DataTable } from '../components/data-table.js'
import { Time } from '../components/time.js'
import { isAdmin, useSession } from '../session/session.js'
import { type ActorNames, actorLink, describeActor, describeEvent, providerName } from './describe-event.js'

type EventResource = Awaited<ReturnType<KeyturnClient['listEvents']>>['data'][number]

/** The customers events name by id (as actors, or in the portal's events), each read once. */
function customerIdsOf(events: readonly EventResource[]): string[] {
  const ids = new Set<string>()
  for (const event of events) {
    const actor = event.actor as { type?: unknown; id?: unknown }
    if (actor.type === 'customer' && typeof actor.id === 'string') {
      ids.add(actor.id)
    }
    const data = event.data as { customerId?: unknown }
    if (event.type.startsWith('portal.') && typeof data.customerId === 'string') {
      ids.add(data.customerId)
    }
  }
  return [...ids]
}

/**
 * Events name people and things by id only (no names or emails are copied into the log): the
 * operators, API keys, integrations and customers are read when shown. What cannot be read (a
 * deleted key) is said by its id.
 */
function useActorNames(events: readonly EventResource[]): ActorNames {
  const { client } = useSession()
  const quiet = { retry: false, staleTime: 60_000 } as const
  const operators = useQuery({ queryKey: ['operators'], queryFn: () => client.listOperators(), ...quiet })
  const apiKeys = useQuery({
    queryKey: ['api-keys', 'names'],
    queryFn: () => client.listApiKeys({ limit: 100 }),
    ...quiet,
  })
  const integrations = useQuery({
    queryKey: ['integrations'],
    queryFn: () => client.listIntegrations(),
    ...quiet,
  })
  const customers = useQueries({
    queries: customerIdsOf(events).map((id) => ({
      queryKey: ['customer', id],
      queryFn: () => client.getCustomer(id as `cus_${string}`),
      ...quiet,
    })),
  })
  return {
    operators: new Map(
      (operators.data?.data ?? []).map((operator) => [operator.id, `${operator.name} <${operator.email}>`]),
    ),
    apiKeys: new Map((apiKeys.data?.data ?? []).map((key) => [key.id as string, key.name])),
    integrations: new Map(
      (integrations.data?.data ?? []).map((integration) => [
        integration.id as string,
        providerName(integration.provider),
      ]),
    ),
    customers: new Map(
      customers.flatMap((customer) =>
        customer.data === undefined ? [] : [[customer.data.id as string, customer.data.email] as const],
      ),
    ),
  }
}

/**
 * Events as a table: each row says what happened to which object, linked to it, by whom (linked to
 * them where the dashboard shows them); the event's data (the object after the change) is shown as
 * JSON on demand.
 */
export function EventTable({ events, caption }: { events: EventResource[]; caption: string }) {
  const names = useActorNames(events)
  const seesIntegrations = isAdmin(useSession())
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
          const { text, link } = describeEvent(event, names)
          const actor = describeActor(event.actor, names)
          const toActor = actorLink(event.actor, seesIntegrations)
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
              <td>{toActor === undefined ? actor : <Link to={toActor}>{actor}</Link>}</td>
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
