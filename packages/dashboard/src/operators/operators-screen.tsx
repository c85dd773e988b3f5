import type { OperatorResource, OperatorRoleName } from '@keyturn/client'
import { Button, NativeSelect, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { DataTable } from '../components/data-table.js'
import { FieldRow } from '../components/form-layout.js'
import { notifyDone } from '../components/notify.js'
import { ProblemMessage } from '../components/problem-message.js'
import { SecretPanel } from '../components/secret-panel.js'
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
        <LinkPanel
          title="Password reset link"
          label="Reset link"
          link={reset.data.resetUrl}
          lasts="one hour"
          onDismiss={() => reset.reset()}
        />
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
  return (
    <tr>
      <td>
        {operator.name}
        {isYou && <span className="muted"> (you)</span>}
      </td>
      <td>{operator.email}</td>
      <td>
        <NativeSelect
          aria-label={`Role of ${operator.email}`}
          miw="7.5rem" // a table cell would squeeze it below its longest option
          value={operator.role}
          data={roles}
          onChange={(event) => onChange({ role: event.currentTarget.value as OperatorRoleName })}
        />
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
  const invite = useMutation({
    mutationFn: (body: { email: string; name: string; role: OperatorRoleName }) =>
      client.inviteOperator(body),
    onSuccess: async (invited) => {
      setLink(invited.invitationUrl)
      await queryClient.invalidateQueries({ queryKey: ['operators'] })
    },
  })
  if (link !== undefined) {
    return (
      <LinkPanel
        title="Invitation link"
        label="Link"
        link={link}
        lasts="7 days"
        onDismiss={() => {
          setLink(undefined)
          invite.reset()
        }}
      />
    )
  }
  return (
    <form
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
      <FieldRow>
        <TextInput label="Email" name="email" type="email" required maxLength={254} />
        <TextInput label="Name" name="name" required maxLength={200} />
        <NativeSelect label="Role" name="role" defaultValue="viewer" data={roles} />
        <Button type="submit" disabled={invite.isPending}>
          Invite
        </Button>
      </FieldRow>
      <ProblemMessage error={invite.error} />
    </form>
  )
}

/** A one-time link to hand to the person it is for (an invitation, a password reset). */
function LinkPanel({
  title,
  label,
  link,
  lasts,
  onDismiss,
}: {
  title: string
  label: string
  link: string
  lasts: string
  onDismiss: () => void
}) {
  return (
    <SecretPanel
      title={title}
      label={label}
      secret={link}
      copyLabel="Copy link"
      dismissLabel="Done"
      onDismiss={onDismiss}
      warning={
        <>
          <strong>Hand this link to the person now. It is shown only once</strong> and works once, for {lasts}
          .
        </>
      }
    />
  )
}
