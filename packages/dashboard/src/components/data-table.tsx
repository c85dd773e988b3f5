import { Table } from '@mantine/core'
import type { ReactNode } from 'react'

/**
 * A table in its own scrolling box: the header row stays in view while the rows scroll, and a table
 * wider than a phone scrolls sideways inside the box, never the page. The box is a labelled,
 * focusable region so keyboard users can scroll it too. `label` also becomes the table's caption
 * for screen readers.
 */
export function DataTable({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section className="table-scroll" aria-label={label} tabIndex={0}>
      <Table stickyHeader highlightOnHover verticalSpacing={6} className="data-table">
        <caption className="visually-hidden">{label}</caption>
        {children}
      </Table>
    </section>
  )
}
