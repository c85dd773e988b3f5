/**
 * @module The paging and sorting part of a list view, kept in the URL (`?page=2&limit=50&sort=key:asc`,
 * or `?after=lic_…` for keyset paging) so a view can be bookmarked and shared.
 */
import type { Paginated } from '@keyturn/client'

export const pageSizes = [10, 30, 50, 100] as const
export const defaultPageSize = 30

export interface ListParams {
  readonly page: number | undefined
  readonly after: string | undefined
  readonly limit: number
  readonly sort: string | undefined
}

export function readListParams(search: URLSearchParams): ListParams {
  const page = Number.parseInt(search.get('page') ?? '', 10)
  const limit = Number.parseInt(search.get('limit') ?? '', 10)
  return {
    page: Number.isInteger(page) && page >= 0 ? page : undefined,
    after: search.get('after') || undefined,
    limit: pageSizes.some((size) => size === limit) ? limit : defaultPageSize,
    sort: search.get('sort') || undefined,
  }
}

/** The list query's paging part: `starting_after` when the URL has a cursor, else the page number. */
export function pagingQuery(params: ListParams): {
  limit: number
  page?: number
  starting_after?: string
  sort?: string
} {
  return {
    limit: params.limit,
    ...(params.after === undefined ? { page: params.page ?? 0 } : { starting_after: params.after }),
    ...(params.sort === undefined ? {} : { sort: params.sort }),
  }
}

/** A copy of `search` with `changes` applied (undefined or '' removes a parameter). */
export function withParams(
  search: URLSearchParams,
  changes: Readonly<Record<string, string | number | undefined>>,
): URLSearchParams {
  const next = new URLSearchParams(search)
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === '') {
      next.delete(name)
    } else {
      next.set(name, String(value))
    }
  }
  return next
}

/** The page numbers to offer: the first, the last and two either side of the current one. */
export function pageNumbers(result: Pick<Paginated<unknown>, 'page' | 'totalPages'>): number[] {
  const pages = new Set<number>()
  for (const page of [0, result.page - 2, result.page - 1, result.page, result.page + 1, result.page + 2]) {
    if (page >= 0 && page < result.totalPages) {
      pages.add(page)
    }
  }
  if (result.totalPages > 0) {
    pages.add(result.totalPages - 1)
  }
  return [...pages].sort((a, b) => a - b)
}
