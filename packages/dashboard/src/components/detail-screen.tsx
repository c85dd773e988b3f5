/**
 * @module The parts every resource's detail page shares (customers, policies, entitlements,
 * webhook endpoints): the way back to the list with the load error, the edit form with its save
 * button and outcome, and the delete button that asks first. Each screen keeps only what is its own:
 * the facts, the form's fields and how they become a request.
 */

import {
  type UseMutationResult,
  type UseQueryResult,
  useMutation,
  useQueryClient,
} from '@tanstack/react-query'
import { type ReactNode, useId } from 'react'
import { Link, useNavigate } from 'react-router'
import { isAdmin, useSession } from '../session/session.js'
import { ConfirmButton } from './confirm-button.js'
import { MutationForm } from './mutation-form.js'
import { notifyDone } from './notify.js'
import { ProblemMessage } from './problem-message.js'

export type FormMutation = UseMutationResult<unknown, Error, FormData>
export type ActionMutation = UseMutationResult<unknown, Error, void>

/** The link back to the list, the load problem if any, then the page once the resource is there. */
export function DetailScreen<T>({
  back,
  backLabel,
  resource,
  children,
}: {
  readonly back: string
  readonly backLabel: string
  readonly resource: UseQueryResult<T>
  readonly children: (data: T) => ReactNode
}) {
  return (
    <>
      <p>
        <Link to={back}>← {backLabel}</Link>
      </p>
      <ProblemMessage error={resource.error} />
      {resource.data !== undefined && children(resource.data)}
    </>
  )
}

/**
 * A detail page's update (from its form) and delete: after either, every query is read again (lists
 * and counts elsewhere show the change); after a delete, the page goes back to the list.
 */
export function useDetailMutations({
  update,
  remove,
  back,
}: {
  readonly update: (form: FormData) => Promise<unknown>
  readonly remove: () => Promise<unknown>
  readonly back: string
}): { readonly update: FormMutation; readonly remove: ActionMutation } {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  return {
    update: useMutation({
      mutationFn: update,
      onSuccess: () => {
        notifyDone('Saved.')
        return queryClient.invalidateQueries()
      },
    }),
    remove: useMutation({
      mutationFn: remove,
      onSuccess: async () => {
        // Cached pages not on screen (the list we go back to) still show what was deleted: drop them,
        // so the list is read afresh instead of showing the deleted row until its refetch answers.
        queryClient.removeQueries({ type: 'inactive' })
        await queryClient.invalidateQueries()
        void navigate(back)
      },
    }),
  }
}

/**
 * The "Edit" section: the fields (filled from the resource, and filled again when `version` says it
 * changed), a save button, then the API's problem next to it; "Saved." comes as a toast.
 */
export function EditSection({
  version,
  saveLabel,
  mutation,
  note,
  children,
}: {
  /** Changes when the resource does (its updatedAt): the form is rebuilt from the new values. */
  readonly version: string
  readonly saveLabel: string
  readonly mutation: FormMutation
  readonly note?: string
  readonly children: ReactNode
}) {
  const id = useId()
  if (!isAdmin(useSession())) {
    return null
  }
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Edit</h2>
      {note !== undefined && <p className="muted">{note}</p>}
      <MutationForm
        aria-labelledby={`${id}-heading`}
        key={version}
        submitLabel={saveLabel}
        mutation={mutation}
      >
        {children}
      </MutationForm>
    </section>
  )
}

/** The "Delete" section: "Delete <noun>" opens a confirmation saying what happens (children). */
export function DeleteSection({
  noun,
  mutation,
  children,
}: {
  readonly noun: string
  readonly mutation: ActionMutation
  readonly children: ReactNode
}) {
  if (!isAdmin(useSession())) {
    return null
  }
  return (
    <section aria-label="Delete">
      <ConfirmButton
        label={`Delete ${noun}`}
        title={`Delete this ${noun}?`}
        confirmLabel={`Delete ${noun}`}
        danger
        onConfirm={() => mutation.mutate()}
      >
        {children}
      </ConfirmButton>
      <ProblemMessage error={mutation.error} />
    </section>
  )
}
