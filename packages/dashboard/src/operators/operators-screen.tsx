import type { OperatorResource, OperatorRoleName } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { CopyButton } from '../components/copy-button.js'
import { DataTable } from '../components/data-table.js'
import { notifyDone } from '../components/notify.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useSession } from '../session/session.js'

const roles: readonly OperatorRoleName[] = ['owner', 'admin', 'support', 'viewer']

/** Owners only (the navigation offers it to no one else; the API refuses the others too). */
export function OperatorsScreen() {
  const { client, access } = useSession()
  const operators = useQuery({ queryKey: ['operators'], queryFn: () => client.listOperators() })
  const queryClient = useQueryClient()
  const update = useMutation({
    mutationFn: ({ id, ...body }: { id: string; role?: OperatorRoleName; status?: 'active' | 'disabled' }) =>
      client.updateOperator(id, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['operators'] }),
  })
  const signOutEverywhere = useMutation({
    mutationFn: (id: string) => client.revokeOperatorSessions(id),
    onSuccess: () => notifyDone('Signed out everywhere.'),
  })
  const reset = useMutation({ mutationFn: (id: string) => client.createOperatorPasswordReset(id) })
  return (
    <>
      <h1>Operators</h1>
      <p className="muted">
        The people who sign in to this dashboard. A new role or disabling someone ends their sessions.
      </p>
      {reset.data !== undefined ? (
        <section className="secret" aria-label="Password reset link">
          <h2>Password reset link</h2>
          <p role="alert">
            <strong>Hand this link to the person now. It is shown only once</strong> and works once, for one
            hour.
          </p>
          {reset.data.mailed && <p>It was also mailed to the operator.</p>}
          <input
            readOnly
            value={reset.data.resetUrl}
            className="wide"
            spellCheck={false}
            aria-label="Reset link"
          />
          <CopyButton value={reset.data.resetUrl} label="Copy link" />
          <div className="actions">
            <Button variant="default" type="button" onClick={() => reset.reset()}>
              Done
            </Button>
          </div>
        </section>
      ) : (
        <InviteOperatorForm />
      )}
      <ProblemMessage error={operators.error ?? update.error ?? signOutEverywhere.error ?? reset.error} />
      {operators.data && (
        <DataTable label="Operators">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {operators.data.data.map((operator) => (
              <OperatorRow
                key={operator.id}
                operator={operator}
                isYou={operator.id === access.operator.id}
                onChange={(change) => update.mutate({ id: operator.id, ...change })}
                onSignOutEverywhere={() => signOutEverywhere.mutate(operator.id)}
                onPasswordReset={() => reset.mutate(operator.id)}
              />
            ))}
          </tbody>
        </DataTable>
      )}
    </>
  )
}

function OperatorRow({
  operator,
  isYou,
  onChange,
  onSignOutEverywhere,
  onPasswordReset,
}: {
  operator: OperatorResource
  isYou: boolean
  onChange: (change: { role?: OperatorRoleName; status?: 'active' | 'disabled' }) => void
  onSignOutEverywhere: () => void
  onPasswordReset: () => void
}) {
  const id = useId()
  return (
    <tr>
      <td>
        {operator.name}
        {isYou && <span className="muted"> (you)</span>}
      </td>
      <td>{operator.email}</td>
      <td>
        <label htmlFor={`${id}-role`} className="visually-hidden">
          Role of {operator.email}
        </label>
        <select
          id={`${id}-role`}
          value={operator.role}
          onChange={(event) => onChange({ role: event.currentTarget.value as OperatorRoleName })}
        >
          {roles.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      </td>
      <td>{operator.status}</td>
      <td>
        {operator.status === 'active' && !isYou && (
          <Button variant="default" type="button" onClick={onPasswordReset}>
            Reset link for {operator.email}
          </Button>
        )}{' '}
        {operator.status === 'active' && !isYou && (
          <Button variant="default" type="button" onClick={onSignOutEverywhere}>
            Sign {operator.email} out everywhere
          </Button>
        )}{' '}
        {operator.status === 'disabled' ? (
          <Button variant="default" type="button" onClick={() => onChange({ status: 'active' })}>
            Enable {operator.email}
          </Button>
        ) : (
          <Button color="red.9" type="button" onClick={() => onChange({ status: 'disabled' })}>
            Disable {operator.email}
          </Button>
        )}
      </td>
    </tr>
  )
}

function InviteOperatorForm() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const [link, setLink] = useState<string>()
  const [mailed, setMailed] = useState(false)
  const invite = useMutation({
    mutationFn: (body: { email: string; name: string; role: OperatorRoleName }) =>
      client.inviteOperator(body),
    onSuccess: async (invited) => {
      setLink(invited.invitationUrl)
      setMailed(invited.mailed)
      await queryClient.invalidateQueries({ queryKey: ['operators'] })
    },
  })
  if (link !== undefined) {
    return (
      <section className="secret" aria-labelledby={`${id}-link-heading`}>
        <h2 id={`${id}-link-heading`}>Invitation link</h2>
        <p role="alert">
          <strong>Hand this link to the person now. It is shown only once</strong> and works once, for 7 days.
        </p>
        {mailed && <p>It was also mailed to them.</p>}
        <label htmlFor={`${id}-link`}>Link</label>
        <input id={`${id}-link`} readOnly value={link} className="wide" spellCheck={false} />
        <CopyButton value={link} label="Copy link" />
        <div className="actions">
          <Button
            variant="default"
            type="button"
            onClick={() => {
              setLink(undefined)
              invite.reset()
            }}
          >
            Done
          </Button>
        </div>
      </section>
    )
  }
  return (
    <form
      className="filters"
      aria-labelledby={`${id}-heading`}
      onSubmit={(event) => {
        event.preventDefault()
        const form = new FormData(event.currentTarget)
        invite.mutate({
          email: String(form.get('email') ?? '').trim(),
          name: String(form.get('name') ?? '').trim(),
          role: String(form.get('role') ?? 'viewer') as OperatorRoleName,
        })
      }}
    >
      <h2 id={`${id}-heading`}>Invite an operator</h2>
      <label htmlFor={`${id}-email`}>Email</label>
      <input id={`${id}-email`} name="email" type="email" required />
      <label htmlFor={`${id}-name`}>Name</label>
      <input id={`${id}-name`} name="name" required />
      <label htmlFor={`${id}-role`}>Role</label>
      <select id={`${id}-role`} name="role" defaultValue="viewer">
        {roles.map((role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
      <Button type="submit" disabled={invite.isPending}>
        Invite
      </Button>
      <ProblemMessage error={invite.error} />
    </form>
  )
}
