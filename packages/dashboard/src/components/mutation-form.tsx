import { Button } from '@mantine/core'
import type { UseMutationResult } from '@tanstack/react-query'
import type { ReactNode } from 'react'
import { FieldStack, FormButtons } from './form-layout.js'
import { ProblemMessage } from './problem-message.js'

/**
 * An uncontrolled form whose submit hands its `FormData` to a mutation: the fields one under the
 * other, the submit button (busy while the mutation runs), then the API's problem, if any.
 */
export function MutationForm({
  mutation,
  submitLabel,
  children,
  ...name
}: {
  readonly mutation: UseMutationResult<unknown, Error, FormData>
  readonly submitLabel: string
  readonly children: ReactNode
} & ({ readonly 'aria-label': string } | { readonly 'aria-labelledby': string })) {
  return (
    <form
      {...name}
      onSubmit={(event) => {
        event.preventDefault()
        mutation.mutate(new FormData(event.currentTarget))
      }}
    >
      <FieldStack>
        {children}
        <FormButtons>
          <Button type="submit" loading={mutation.isPending}>
            {submitLabel}
          </Button>
        </FormButtons>
        <ProblemMessage error={mutation.error} />
      </FieldStack>
    </form>
  )
}
