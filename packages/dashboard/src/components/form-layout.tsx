/**
 * @module How a form's fields are laid out, with Mantine's layout components (no stylesheet class
 * per form): a column of fields (`FieldStack`) for a form that edits something, a row that wraps
 * (`FieldRow`) for a filter bar or a short form beside a list.
 */
import { Group, Stack } from '@mantine/core'
import type { ReactNode } from 'react'

/** A form's fields one under the other, as wide as a line of reading; its buttons go last. */
export function FieldStack({ children }: { readonly children: ReactNode }) {
  return (
    <Stack gap="sm" maw="36rem">
      {children}
    </Stack>
  )
}

/**
 * Fields side by side, wrapping onto the next line when the screen is narrow (at phone width a field
 * is never wider than the screen: a select as long as its longest option shrinks to fit).
 */
export function FieldRow({ children }: { readonly children: ReactNode }) {
  return (
    <Group className="field-row" gap="sm" align="flex-end" my="sm">
      {children}
    </Group>
  )
}

/** A form's buttons, in a row. */
export function FormButtons({ children }: { readonly children: ReactNode }) {
  return <Group gap="xs">{children}</Group>
}
