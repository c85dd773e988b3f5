import type { KeyturnClient, LicenseResource } from '@keyturn/client'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { ConfirmButton } from '../../components/confirm-button.js'
import { DataTable } from '../../components/data-table.js'
import { EmptyState } from '../../components/empty-state.js'
import { notifyDone } from '../../components/notify.js'
import { ProblemMessage } from '../../components/problem-message.js'
import { Time } from '../../components/time.js'
import { may, useSession } from '../../session/session.js'

/** The machines holding a seat, each deactivated after a confirmation (support and above). */
export function Machines({ license }: { readonly license: LicenseResource }) {
  const session = useSession()
  const { client } = session
  const queryClient = useQueryClient()
  const activations = useQuery({
    queryKey: ['activations', license.id],
    queryFn: () => client.listActivations(license.id, { limit: 100 }),
  })
  const remove = useMutation({
    mutationFn: (activation: {
      readonly id: Parameters<KeyturnClient['deleteActivation']>[0]
      readonly name: string
    }) => client.deleteActivation(activation.id),
    onSuccess: async (_, activation) => {
      notifyDone(`Deactivated ${activation.name}: its seat is free.`)
      await queryClient.invalidateQueries()
    },
  })
  return (
    <section aria-labelledby="activations-heading">
      <h2 id="activations-heading">Machines</h2>
      <ProblemMessage error={activations.error ?? remove.error} />
      {activations.data &&
        (activations.data.totalCount === 0 ? (
          <EmptyState title="No machine is activated">
            A machine takes a seat when the application activates it (or from a request file, offline).
          </EmptyState>
        ) : (
          <DataTable label="Activations">
            <thead>
              <tr>
                <th scope="col">Fingerprint</th>
                <th scope="col">Name</th>
                <th scope="col">Activated</th>
                <th scope="col">Last seen</th>
                <th scope="col">Seat lapses</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {activations.data.data.map((activation) => {
                const name = activation.name ?? activation.fingerprint
                return (
                  <tr key={activation.id}>
                    <td>
                      <code>{activation.fingerprint}</code>
                    </td>
                    <td>{activation.name ?? '—'}</td>
                    <td>
                      <Time value={activation.createdAt} />
                    </td>
                    <td>
                      <Time value={activation.lastSeenAt} />
                    </td>
                    <td>
                      <Time value={activation.expiresAt} empty="Never" />
                    </td>
                    <td>
                      {may(session, 'support') && (
                        <ConfirmButton
                          label={`Deactivate ${name}`}
                          title="Deactivate this machine?"
                          confirmLabel="Deactivate"
                          danger
                          onConfirm={() => remove.mutate({ id: activation.id, name })}
                        >
                          <p>The machine loses its seat; it can activate again while seats are free.</p>
                        </ConfirmButton>
                      )}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </DataTable>
        ))}
      {activations.data && activations.data.totalCount > activations.data.data.length && (
        <p className="muted">
          Showing the latest {activations.data.data.length} of {activations.data.totalCount}.
        </p>
      )}
    </section>
  )
}
