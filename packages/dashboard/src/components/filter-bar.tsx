import { Button } from '@mantine/core'
import type { ReactNode } from 'react'
import { useSearchParams } from 'react-router'
import { FieldRow, FormButtons } from './form-layout.js'
import { withParams } from './list-params.js'

/**
 * A list's filters, kept in the URL: the fields (uncontrolled, filled from the URL) named as the URL
 * parameters in `names`; "Apply filters" writes them (back to the first page), "Clear filters" drops
 * them. The form is rebuilt whenever the URL changes (back, forward, a link), so it always shows the
 * filters in effect.
 */
export function FilterBar({
  label,
  names,
  submitLabel = 'Apply filters',
  clearable = true,
  children,
}: {
  readonly label: string
  readonly names: readonly string[]
  readonly submitLabel?: string
  /** Whether a "Clear filters" button drops every filter at once. */
  readonly clearable?: boolean
  readonly children: ReactNode
}) {
  const [search, setSearch] = useSearchParams()
  const firstPage = { page: undefined, after: undefined }
  return (
    <form
      aria-label={label}
      key={search.toString()}
      onSubmit={(event) => {
        event.preventDefault()
        const form = new FormData(event.currentTarget)
        const changes = Object.fromEntries(names.map((name) => [name, String(form.get(name) ?? '').trim()]))
        setSearch(withParams(search, { ...changes, ...firstPage }))
      }}
    >
      <FieldRow>
        {children}
        <FormButtons>
          <Button variant="default" type="submit">
            {submitLabel}
          </Button>
          {clearable && (
            <Button
              variant="default"
              type="button"
              onClick={() =>
                setSearch(
                  withParams(search, {
                    ...Object.fromEntries(names.map((name) => [name, undefined])),
                    ...firstPage,
                  }),
                )
              }
            >
              Clear filters
            </Button>
          )}
        </FormButtons>
      </FieldRow>
    </form>
  )
}
