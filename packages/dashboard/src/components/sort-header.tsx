import { useSearchParams } from 'react-router'
import { withParams } from './list-params.js'

/**
 * A column header that sorts the list on the server (`sort=field:order` in the URL): the first click
 * sorts ascending, the next descending. `aria-sort` tells screen readers the current order.
 */
export function SortHeader({
  field,
  label,
  defaultSort,
}: {
  field: string
  label: string
  defaultSort: string
}) {
  const [search, setSearch] = useSearchParams()
  const [sortField, order] = (search.get('sort') || defaultSort).split(':')
  const isSorted = sortField === field
  const next = isSorted && order === 'asc' ? 'desc' : 'asc'
  return (
    <th scope="col" aria-sort={isSorted ? (order === 'desc' ? 'descending' : 'ascending') : 'none'}>
      <button
        type="button"
        className="link"
        onClick={() =>
          setSearch(withParams(search, { sort: `${field}:${next}`, page: undefined, after: undefined }))
        }
      >
        {label}
        <span aria-hidden="true">{isSorted ? (order === 'desc' ? ' ▼' : ' ▲') : ''}</span>
        <span className="visually-hidden">, sort {next === 'asc' ? 'ascending' : 'descending'}</span>
      </button>
    </th>
  )
}
