import { NativeSelect, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useNavigate } from 'react-router'
import {
  EntitlementsField,
  LeaseMinutesField,
  MaxActivationsField,
  MaxUsesField,
} from '../components/license-fields.js'
import { MetadataField, parseCodes, parseJsonObject } from '../components/metadata.js'
import { MutationForm } from '../components/mutation-form.js'
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
      <MutationForm aria-label="Create a license" mutation={create} submitLabel="Create license">
        <ProductField />
        <PolicyField policies={policies.data?.data} />
        <MaxActivationsField
          label="Maximum activations"
          description="Empty: unlimited machines (or the policy's number)."
          defaultValue={1}
        />
        <TextInput
          label="Expires on (UTC, end of day)"
          description="Empty: never expires (or as the policy says)."
          name="expirationDate"
          type="date"
        />
        <LeaseMinutesField label="Floating seat lease in minutes (optional)" />
        <MaxUsesField label="Maximum uses (optional; empty: unmetered)" />
        <TextInput label="Customer id (optional)" name="customerId" placeholder="cus_…" />
        <EntitlementsField label="Entitlements (codes, comma-separated, optional)" />
        <MetadataField />
        <TextInput
          label="Key of your own (optional)"
          description="Empty: Keyturn makes one. A key from another system is kept exactly as typed (8 to 256 characters)."
          name="key"
          autoComplete="off"
        />
      </MutationForm>
    </>
  )
}

/** The policy to create the license from: a select over one page of policies, or its id when there are more. */
function PolicyField({
  policies,
}: {
  readonly policies: readonly { id: string; name: string }[] | undefined
}) {
  const label = 'Policy (optional)'
  const description =
    'A policy of the same product: its activations, duration and entitlements apply unless given below.'
  if (policies === undefined) {
    return <TextInput label={label} description={description} name="policyId" placeholder="pol_…" />
  }
  return (
    <NativeSelect label={label} description={description} name="policyId" defaultValue="">
      <option value="">None</option>
      {policies.map((policy) => (
        <option key={policy.id} value={policy.id}>
          {policy.name}
        </option>
      ))}
    </NativeSelect>
  )
}
