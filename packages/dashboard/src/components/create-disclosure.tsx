import { Button } from '@mantine/core'
import type { UseMutationResult } from '@tanstack/react-query'
import type { ReactNode } from 'react'
import { FieldStack, FormButtons } from './form-layout.js'
import { ProblemMessage } from './problem-message.js'

/**
 * A list screen's "Create a …" form, folded away until asked for: the fields one below the other,
 * the submit button, then the API's problem. The form stays uncontrolled: the mutation gets its
 * `FormData`.
 */
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
      <form
        aria-label={label}
        onSubmit={(event) => {
          event.preventDefault()
          mutation.mutate(new FormData(event.currentTarget))
        }}
      >
        <FieldStack>
          {children}
          <FormButtons>
            <Button type="submit" disabled={mutation.isPending}>
              {submitLabel}
            </Button>
          </FormButtons>
        </FieldStack>
        <ProblemMessage error={mutation.error} />
      </form>
    </details>
  )
}
