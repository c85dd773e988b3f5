import type { UseMutationResult } from '@tanstack/react-query'
import type { ReactNode } from 'react'
import { MutationForm } from './mutation-form.js'

/** A list screen's "Create a …" form ({@link MutationForm}), folded away until asked for. */
export function CreateDisclosure({
  summary,
  label = summary,
  submitLabel,
  mutation,
  children,
}: {
  readonly summary: string
  /** The form's accessible name, when it is not the summary's words. */
  readonly label?: string
  readonly submitLabel: string
  readonly mutation: UseMutationResult<unknown, Error, FormData>
  readonly children: ReactNode
}) {
  return (
    <details className="create">
      <summary>{summary}</summary>
      <MutationForm aria-label={label} submitLabel={submitLabel} mutation={mutation}>
        {children}
      </MutationForm>
    </details>
  )
}
