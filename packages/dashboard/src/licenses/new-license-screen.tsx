import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useNavigate } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { useProductChoices } from '../components/product-choices.js'
import { useSession } from '../session/session.js'

type CreateLicenseBody = Parameters<ReturnType<typeof useSession>['client']['createLicense']>[0]

/** Reads the create form: an empty "maximum activations" is unlimited, an empty date never expires. */
function toCreateBody(form: FormData): CreateLicenseBody {
  const maxActivations = String(form.get('maxActivations') ?? '').trim()
  const expirationDate = String(form.get('expirationDate') ?? '')
  const leaseMinutes = String(form.get('heartbeatMinutes') ?? '').trim()
  const maxUses = String(form.get('maxUses') ?? '').trim()
  return {
    productId: String(form.get('productId') ?? '') as CreateLicenseBody['productId'], // the API checks it
    maxActivations: maxActivations === '' ? null : Number(maxActivations),
    expirationDate: expirationDate === '' ? null : `${expirationDate}T23:59:59.999Z`,
    ...(leaseMinutes === '' ? {} : { heartbeatTtl: Math.round(Number(leaseMinutes) * 60) }),
    ...(maxUses === '' ? {} : { maxUses: Number(maxUses) }),
  }
}

export function NewLicenseScreen() {
  const session = useSession()
  const products = useProductChoices()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const id = useId()
  const create = useMutation({
    mutationFn: (body: CreateLicenseBody) => session.client.createLicense(body),
    onSuccess: async (license) => {
      await queryClient.invalidateQueries()
      void navigate(`/licenses/${license.id}`)
    },
  })
  const scoped = session.access.role === 'product' ? session.access.productId : undefined
  return (
    <>
      <p>
        <Link to="/licenses">← Licenses</Link>
      </p>
      <h1>Create a license</h1>
      <form
        className="stacked"
        aria-label="Create a license"
        onSubmit={(event) => {
          event.preventDefault()
          create.mutate(toCreateBody(new FormData(event.currentTarget)))
        }}
      >
        <label htmlFor={`${id}-product`}>Product</label>
        {products.data ? (
          <select id={`${id}-product`} name="productId" required defaultValue={scoped}>
            {products.data.data.map((product) => (
              <option key={product.id} value={product.id}>
                {product.name}
              </option>
            ))}
          </select>
        ) : (
          <input id={`${id}-product`} name="productId" required placeholder="prd_…" defaultValue={scoped} />
        )}
        <label htmlFor={`${id}-max`}>Maximum activations</label>
        <input
          id={`${id}-max`}
          name="maxActivations"
          type="number"
          min={1}
          step={1}
          defaultValue={1}
          aria-describedby={`${id}-max-help`}
        />
        <p id={`${id}-max-help`} className="muted">
          Empty: unlimited machines.
        </p>
        <label htmlFor={`${id}-expires`}>Expires on (UTC, end of day)</label>
        <input
          id={`${id}-expires`}
          name="expirationDate"
          type="date"
          aria-describedby={`${id}-expires-help`}
        />
        <p id={`${id}-expires-help`} className="muted">
          Empty: never expires.
        </p>
        <label htmlFor={`${id}-lease`}>Floating seat lease in minutes (optional)</label>
        <input id={`${id}-lease`} name="heartbeatMinutes" type="number" min={1} step="any" />
        <label htmlFor={`${id}-uses`}>Maximum uses (optional; empty: unmetered)</label>
        <input id={`${id}-uses`} name="maxUses" type="number" min={1} step={1} />
        <div className="actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Create license
          </button>
        </div>
        <ProblemMessage error={create.error} />
      </form>
    </>
  )
}
