import { Button } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link, useNavigate } from 'react-router'
import { MetadataField, parseCodes, parseJsonObject } from '../components/metadata.js'
import { ProblemMessage } from '../components/problem-message.js'
import { ProductField } from '../components/product-field.js'
import { useSession } from '../session/session.js'
import { expirationFromInput } from './expiration-date.js'

type CreateLicenseBody = Parameters<ReturnType<typeof useSession>['client']['createLicense']>[0]

/**
 * Reads the create form. Without a policy, an empty "maximum activations" is unlimited and an
 * empty date never expires; with one, empty fields are left out so the policy's values apply.
 */
function toCreateBody(form: FormData): CreateLicenseBody {
  const policyId = String(form.get('policyId') ?? '')
  const fromPolicy = policyId !== ''
  const maxActivations = String(form.get('maxActivations') ?? '').trim()
  const expirationDate = String(form.get('expirationDate') ?? '')
  const customerId = String(form.get('customerId') ?? '').trim()
  const entitlements = parseCodes(form.get('entitlements'))
  const metadata = parseJsonObject(form.get('metadata'), 'Metadata')
  const body: CreateLicenseBody = {
    productId: String(form.get('productId') ?? '') as CreateLicenseBody['productId'], // the API checks it
  }
  if (fromPolicy) {
    body.policyId = policyId as NonNullable<CreateLicenseBody['policyId']> // from the API's own list
  }
  if (maxActivations !== '' || !fromPolicy) {
    body.maxActivations = maxActivations === '' ? null : Number(maxActivations)
  }
  if (expirationDate !== '' || !fromPolicy) {
    body.expirationDate = expirationFromInput(expirationDate)
  }
  const leaseMinutes = String(form.get('heartbeatMinutes') ?? '').trim()
  if (leaseMinutes !== '') {
    body.heartbeatTtl = Math.round(Number(leaseMinutes) * 60)
  }
  const maxUses = String(form.get('maxUses') ?? '').trim()
  if (maxUses !== '') {
    body.maxUses = Number(maxUses)
  }
  if (customerId !== '') {
    body.customerId = customerId as NonNullable<CreateLicenseBody['customerId']> // the API checks it
  }
  if (entitlements.length > 0) {
    body.entitlements = entitlements as CreateLicenseBody['entitlements'] // the API checks each code
  }
  if (metadata !== undefined) {
    body.metadata = metadata
  }
  const key = String(form.get('key') ?? '')
  if (key !== '') {
    body.key = key // the API checks its shape
  }
  return body
}

export function NewLicenseScreen() {
  const session = useSession()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const id = useId()
  const policies = useQuery({
    queryKey: ['policies', 'choices'],
    queryFn: () => session.client.listPolicies({ limit: 100, sort: 'name:asc' }),
    select: (page) => (page.hasNextPage ? undefined : page),
  })
  const create = useMutation({
    mutationFn: (form: FormData) => session.client.createLicense(toCreateBody(form)),
    onSuccess: async (license) => {
      await queryClient.invalidateQueries()
      void navigate(`/licenses/${license.id}`)
    },
  })
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
          create.mutate(new FormData(event.currentTarget))
        }}
      >
        <ProductField id={`${id}-product`} />
        <label htmlFor={`${id}-policy`}>Policy (optional)</label>
        {policies.data ? (
          <select id={`${id}-policy`} name="policyId" defaultValue="" aria-describedby={`${id}-policy-help`}>
            <option value="">None</option>
            {policies.data.data.map((policy) => (
              <option key={policy.id} value={policy.id}>
                {policy.name}
              </option>
            ))}
          </select>
        ) : (
          <input
            id={`${id}-policy`}
            name="policyId"
            placeholder="pol_…"
            aria-describedby={`${id}-policy-help`}
          />
        )}
        <p id={`${id}-policy-help`} className="muted">
          A policy of the same product: its activations, duration and entitlements apply unless given below.
        </p>
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
          Empty: unlimited machines (or the policy's number).
        </p>
        <label htmlFor={`${id}-expires`}>Expires on (UTC, end of day)</label>
        <input
          id={`${id}-expires`}
          name="expirationDate"
          type="date"
          aria-describedby={`${id}-expires-help`}
        />
        <p id={`${id}-expires-help`} className="muted">
          Empty: never expires (or as the policy says).
        </p>
        <label htmlFor={`${id}-lease`}>Floating seat lease in minutes (optional)</label>
        <input id={`${id}-lease`} name="heartbeatMinutes" type="number" min={1} step="any" />
        <label htmlFor={`${id}-uses`}>Maximum uses (optional; empty: unmetered)</label>
        <input id={`${id}-uses`} name="maxUses" type="number" min={1} step={1} />
        <label htmlFor={`${id}-customer`}>Customer id (optional)</label>
        <input id={`${id}-customer`} name="customerId" placeholder="cus_…" />
        <label htmlFor={`${id}-codes`}>Entitlements (codes, comma-separated, optional)</label>
        <input id={`${id}-codes`} name="entitlements" />
        <MetadataField />
        <label htmlFor={`${id}-key`}>Key of your own (optional)</label>
        <input id={`${id}-key`} name="key" autoComplete="off" aria-describedby={`${id}-key-help`} />
        <p id={`${id}-key-help`} className="muted">
          Empty: Keyturn makes one. A key from another system is kept exactly as typed (8 to 256 characters).
        </p>
        <div className="actions">
          <Button type="submit" disabled={create.isPending}>
            Create license
          </Button>
        </div>
        <ProblemMessage error={create.error} />
      </form>
    </>
  )
}
