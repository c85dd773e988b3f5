import type { Paginated } from '@keyturn/client'
import { Group, NativeSelect } from '@mantine/core'
import { useId } from 'react'
import { Link, useSearchParams } from 'react-router'
import { EmptyState } from './empty-state.js'
import { plural } from './format.js'
import { pageNumbers, pageSizes, readListParams, withParams } from './list-params.js'

/**
 * Server-side paging for a list: page size, page numbers, and "Next" by `starting_after` (the last
 * item's id), so rows inserted meanwhile never shift what the next page shows.
 */
export function Pager({ result, noun }: { result: Paginated<{ id: string }>; noun: string }) {
  const [search, setSearch] = useSearchParams()
  const params = readListParams(search)
  const sizeId = useId()
  const last = result.data.at(-1)
  const first = result.data.length === 0 ? 0 : result.page * result.limit + 1
  const toPage = (page: number) => `?${withParams(search, { page, after: undefined })}`
  const nouns = /[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`
  if (result.totalCount === 0) {
    const filtered = [...search.keys()].some((name) => !['page', 'after', 'limit', 'sort'].includes(name))
    return (
      <EmptyState title={`No ${nouns}${filtered ? ' match' : ' yet'}`}>
        {filtered
          ? 'Nothing matches these filters: clear or change them.'
          : `When there are ${nouns}, they are listed here.`}
      </EmptyState>
    )
  }
  return (
    <Group className="pager" gap="md">
      <p className="muted" aria-live="polite">
        {`${first.toLocaleString('en')}–${(first + result.data.length - 1).toLocaleString('en')} of ${plural(result.totalCount, noun, nouns)}`}
      </p>
      <nav aria-label={`Pages of ${nouns}`}>
        <ul>
          <li>
            {result.hasPrevPage && result.prevPage !== null ? (
              <Link to={toPage(result.prevPage)} rel="prev">
                Previous
              </Link>
            ) : (
              <span className="disabled">Previous</span>
            )}
          </li>
          {pageNumbers(result).map((page, index, pages) => (
            <li key={page}>
              {index > 0 && page - (pages[index - 1] ?? page) > 1 ? <span aria-hidden="true">… </span> : null}
              {page === result.page ? (
                <span aria-current="page" className="current">
                  <span className="visually-hidden">Page </span>
                  {page + 1}
                </span>
              ) : (
                <Link to={toPage(page)} aria-label={`Page ${page + 1}`}>
                  {page + 1}
                </Link>
              )}
            </li>
          ))}
          <li>
            {result.hasNextPage && last !== undefined ? (
              <Link to={`?${withParams(search, { after: last.id, page: undefined })}`} rel="next">
                Next
              </Link>
            ) : (
              <span className="disabled">Next</span>
            )}
          </li>
        </ul>
      </nav>
      <NativeSelect
        id={sizeId}
        label="Page size"
        size="xs"
        className="page-size"
        value={String(params.limit)}
        onChange={(event) =>
          setSearch(withParams(search, { limit: event.target.value, page: undefined, after: undefined }))
        }
        data={pageSizes.map(String)}
      />
    </Group>
  )
}
