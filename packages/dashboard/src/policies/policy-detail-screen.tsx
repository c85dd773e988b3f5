import type { KeyturnClient } from '@keyturn/client'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { ConfirmButton } from '../components/confirm-button.js'
import { seatTerms, usesLimit } from '../components/format.js'
import { MetadataList } from '../components/metadata.js'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductNames } from '../components/product-field.js'
import { Time } from '../components/time.js'
import { useSession } from '../session/session.js'
import { durationInDays, PolicyFieldset, toPolicyFields } from './policy-form.js'

type PolicyId = Parameters<KeyturnClient['getPolicy']>[0]

export function PolicyDetailScreen() {
  const { client } = useSession()
  const id = (useParams().id ?? '') as PolicyId // the route's :id; the API answers 404 for a bad one
  const policy = useQuery({ queryKey: ['policy', id], queryFn: () => client.getPolicy(id) })
  const names = useProductNames()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const formId = useId()
  const update = useMutation({
    mutationFn: (form: FormData) => client.updatePolicy(id, toPolicyFields(form)),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  const remove = useMutation({
    mutationFn: () => client.deletePolicy(id),
    onSuccess: async () => {
      await queryClient.invalidateQueries()
      void navigate('/policies')
    },
  })
  return (
    <>
      <p>
        <Link to="/policies">← Policies</Link>
      </p>
      <ProblemMessage error={policy.error} />
      {policy.data && (
        <>
          <h1>{policy.data.name}</h1>
          <dl className="facts">
            <dt>Id</dt>
            <dd>
              <code>{policy.data.id}</code>
            </dd>
            <dt>Product</dt>
            <dd>
              <Link to={`/products/${policy.data.productId}`}>
                {names.get(policy.data.productId) ?? policy.data.productId}
              </Link>
            </dd>
            <dt>Activations</dt>
            <dd>{policy.data.maxActivations ?? 'Unlimited'}</dd>
            <dt>Duration</dt>
            <dd>
              {durationInDays(policy.data.duration)}, counted from{' '}
              {policy.data.expirationBasis === 'firstActivation' ? 'the first activation' : 'creation'}
            </dd>
            <dt>Seats</dt>
            <dd>{seatTerms(policy.data.heartbeatTtl)}</dd>
            <dt>Uses</dt>
            <dd>
              {policy.data.maxUses === null ? 'Unmetered' : `At most ${usesLimit(policy.data.maxUses)}`}
            </dd>
            <dt>Entitlements</dt>
            <dd>{policy.data.entitlements.join(', ') || 'None'}</dd>
            <dt>Metadata</dt>
            <dd>
              <MetadataList metadata={policy.data.metadata} />
            </dd>
            <dt>Licenses</dt>
            <dd>
              <Link to={`/licenses?policyId=${encodeURIComponent(policy.data.id)}`}>
                Licenses made from it
              </Link>
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time value={policy.data.updatedAt} />
            </dd>
          </dl>
          <section aria-labelledby={`${formId}-heading`}>
            <h2 id={`${formId}-heading`}>Edit</h2>
            <p className="muted">Changes apply to licenses created from now on.</p>
            <form
              className="stacked"
              aria-labelledby={`${formId}-heading`}
              key={policy.data.updatedAt}
              onSubmit={(event) => {
                event.preventDefault()
                update.mutate(new FormData(event.currentTarget))
              }}
            >
              <PolicyFieldset policy={policy.data} />
              <div className="actions">
                <button type="submit" disabled={update.isPending}>
                  Save policy
                </button>
              </div>
              <ProblemMessage error={update.error} />
              {update.isSuccess && <p role="status">Saved.</p>}
            </form>
          </section>
          <section aria-label="Delete">
            <ConfirmButton
              label="Delete policy"
              title="Delete this policy?"
              confirmLabel="Delete policy"
              danger
              onConfirm={() => remove.mutate()}
            >
              <p>
                <strong>{policy.data.name}</strong> is deleted for good. A policy licenses were made from
                cannot be deleted.
              </p>
            </ConfirmButton>
            <ProblemMessage error={remove.error} />
          </section>
        </>
      )}
    </>
  )
}
