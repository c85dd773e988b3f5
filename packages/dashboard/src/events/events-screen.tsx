import { eventTypes } from '@keyturn/client'
import { NativeSelect, TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useSearchParams } from 'react-router'
import { FilterBar } from '../components/filter-bar.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { ProductField } from '../components/product-field.js'
import { useSession } from '../session/session.js'
import { eventFilterNames, eventListQuery, readEventFilters } from './event-query.js'
import { EventTable } from './event-table.js'

/** The audit log: every change, newest first, filtered on the server. */
export function EventsScreen() {
  const { client } = useSession()
  const [search] = useSearchParams()
  const query = eventListQuery(search)
  const events = useQuery({
    queryKey: ['events', query],
    queryFn: ({ signal }) => client.listEvents(query, { signal }),
    placeholderData: (previous) => previous,
  })
  const operators = useQuery({ queryKey: ['operators'], queryFn: () => client.listOperators() })
  const filters = readEventFilters(search)
  return (
    <>
      <h1>Events</h1>
      <FilterBar label="Filter events" names={eventFilterNames}>
        <NativeSelect
          label="Type"
          name="type"
          defaultValue={filters.type}
          data={[{ value: '', label: 'Any' }, ...eventTypes]}
        />
        <ProductField any="Any" defaultValue={filters.productId} />
        <TextInput label="License id" name="licenseId" defaultValue={filters.licenseId} placeholder="lic_…" />
        <TextInput label="From" name="from" type="date" defaultValue={filters.from} />
        <TextInput label="Until" name="to" type="date" defaultValue={filters.to} />
        <TextInput
          label="By API key id"
          name="apiKeyId"
          defaultValue={filters.apiKeyId}
          placeholder="key_…"
        />
        <NativeSelect
          label="By operator"
          name="operatorId"
          defaultValue={filters.operatorId}
          data={[
            { value: '', label: 'Anyone' },
            ...(operators.data?.data ?? []).map((operator) => ({
              value: operator.id,
              label: `${operator.name} (${operator.email})`,
            })),
          ]}
        />
      </FilterBar>
      <ProblemMessage error={events.error} />
      {events.data && (
        <div aria-busy={events.isFetching}>
          <EventTable events={events.data.data} caption="Events" />
          <Pager result={events.data} noun="event" />
        </div>
      )}
    </>
  )
}
