import { eventTypes } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useId } from 'react'
import { useSearchParams } from 'react-router'
import { withParams } from '../components/list-params.js'
import { Pager } from '../components/pager.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { useSession } from '../session/session.js'
import { eventFilterNames, eventListQuery, readEventFilters } from './event-query.js'
import { EventTable } from './event-table.js'

/** The audit log: every change, newest first, filtered on the server. */
export function EventsScreen() {
  const { client } = useSession()
  const [search, setSearch] = useSearchParams()
  const query = eventListQuery(search)
  const events = useQuery({
    queryKey: ['events', query],
    queryFn: ({ signal }) => client.listEvents(query, { signal }),
    placeholderData: (previous) => previous,
  })
  const products = useProductChoices()
  const operators = useQuery({ queryKey: ['operators'], queryFn: () => client.listOperators() })
  const filters = readEventFilters(search)
  const id = useId()
  return (
    <>
      <h1>Events</h1>
      <form
        className="filters"
        aria-label="Filter events"
        key={search.toString()}
        onSubmit={(event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          const changes = Object.fromEntries(
            eventFilterNames.map((name) => [name, String(form.get(name) ?? '')]),
          )
          setSearch(withParams(search, { ...changes, page: undefined, after: undefined }))
        }}
      >
        <div>
          <label htmlFor={`${id}-type`}>Type</label>
          <select id={`${id}-type`} name="type" defaultValue={filters.type}>
            <option value="">Any</option>
            {eventTypes.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-product`}>Product</label>
          {products.data ? (
            <select id={`${id}-product`} name="productId" defaultValue={filters.productId}>
              <option value="">Any</option>
              {products.data.data.map((product) => (
                <option key={product.id} value={product.id}>
                  {product.name}
                </option>
              ))}
            </select>
          ) : (
            <input
              id={`${id}-product`}
              name="productId"
              defaultValue={filters.productId}
              placeholder="prd_…"
            />
          )}
        </div>
        <div>
          <label htmlFor={`${id}-license`}>License id</label>
          <input id={`${id}-license`} name="licenseId" defaultValue={filters.licenseId} placeholder="lic_…" />
        </div>
        <div>
          <label htmlFor={`${id}-from`}>From</label>
          <input id={`${id}-from`} name="from" type="date" defaultValue={filters.from} />
        </div>
        <div>
          <label htmlFor={`${id}-to`}>Until</label>
          <input id={`${id}-to`} name="to" type="date" defaultValue={filters.to} />
        </div>
        <div>
          <label htmlFor={`${id}-key`}>By API key id</label>
          <input id={`${id}-key`} name="apiKeyId" defaultValue={filters.apiKeyId} placeholder="key_…" />
        </div>
        <div>
          <label htmlFor={`${id}-operator`}>By operator</label>
          <select id={`${id}-operator`} name="operatorId" defaultValue={filters.operatorId}>
            <option value="">Anyone</option>
            {(operators.data?.data ?? []).map((operator) => (
              <option key={operator.id} value={operator.id}>
                {operator.name} ({operator.email})
              </option>
            ))}
          </select>
        </div>
        <div className="actions">
          <Button variant="default" type="submit">
            Apply filters
          </Button>
          <Button
            variant="default"
            type="button"
            onClick={() =>
              setSearch(
                withParams(search, {
                  ...Object.fromEntries(eventFilterNames.map((name) => [name, undefined])),
                  page: undefined,
                  after: undefined,
                }),
              )
            }
          >
            Clear filters
          </Button>
        </div>
      </form>
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
