import type { KeyturnClient } from '@keyturn/client'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { ConfirmButton } from '../components/confirm-button.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductNames } from '../components/product-field.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'

type EntitlementId = Parameters<KeyturnClient['getEntitlement']>[0]

export function EntitlementDetailScreen() {
  const { client } = useSession()
  const id = (useParams().id ?? '') as EntitlementId // the route's :id; the API answers 404 for a bad one
  const entitlement = useQuery({ queryKey: ['entitlement', id], queryFn: () => client.getEntitlement(id) })
  const names = useProductNames()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const formId = useId()
  const update = useMutation({
    mutationFn: (form: FormData) =>
      client.updateEntitlement(id, {
        code: String(form.get('code') ?? '').trim(),
        name: String(form.get('name') ?? '').trim(),
      }),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  const remove = useMutation({
    mutationFn: () => client.deleteEntitlement(id),
    onSuccess: async () => {
      await queryClient.invalidateQueries()
      void navigate('/entitlements')
    },
  })
  return (
    <>
      <p>
        <Link to="/entitlements">← Entitlements</Link>
      </p>
      <ProblemMessage error={entitlement.error} />
      {entitlement.data && (
        <>
          <h1>{entitlement.data.name}</h1>
          <dl className="facts">
            <dt>Code</dt>
            <dd>
              <code>{entitlement.data.code}</code>
            </dd>
            <dt>Product</dt>
            <dd>
              <Link to={`/products/${entitlement.data.productId}`}>
                {names.get(entitlement.data.productId) ?? entitlement.data.productId}
              </Link>
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time value={entitlement.data.updatedAt} />
            </dd>
          </dl>
          <section aria-labelledby={`${formId}-heading`}>
            <h2 id={`${formId}-heading`}>Edit</h2>
            <form
              className="stacked"
              aria-labelledby={`${formId}-heading`}
              key={entitlement.data.updatedAt}
              onSubmit={(event) => {
                event.preventDefault()
                update.mutate(new FormData(event.currentTarget))
              }}
            >
              <label htmlFor={`${formId}-code`}>Code</label>
              <input
                id={`${formId}-code`}
                name="code"
                required
                maxLength={64}
                defaultValue={entitlement.data.code}
              />
              <label htmlFor={`${formId}-name`}>Name</label>
              <input
                id={`${formId}-name`}
                name="name"
                required
                maxLength={200}
                defaultValue={entitlement.data.name}
              />
              <div className="actions">
                <button type="submit" disabled={update.isPending}>
                  Save entitlement
                </button>
              </div>
              <ProblemMessage error={update.error} />
              {update.isSuccess && <p role="status">Saved.</p>}
            </form>
          </section>
          <section aria-label="Delete">
            <ConfirmButton
              label="Delete entitlement"
              title="Delete this entitlement?"
              confirmLabel="Delete entitlement"
              danger
              onConfirm={() => remove.mutate()}
            >
              <p>
                <code>{entitlement.data.code}</code> is deleted for good: every license and policy that grants
                it stops granting it.
              </p>
            </ConfirmButton>
            <ProblemMessage error={remove.error} />
          </section>
        </>
      )}
    </>
  )
}
