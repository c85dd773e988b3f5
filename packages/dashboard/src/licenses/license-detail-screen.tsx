import type { KeyturnClient, LicenseResource } from '@keyturn/client'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { Link, useParams } from 'react-router'
import { ConfirmButton } from '../components/confirm-button.js'
import { CopyButton } from '../components/copy-button.js'
import { formatTime, minutes, seatTerms } from '../components/format.js'
import { MetadataField, MetadataList, parseCodes, parseJsonObject } from '../components/metadata.js'
import { ProblemMessage } from '../components/problem-message.js'
import { Time } from '../components/time.js'
import { LicenseEvents } from '../events/license-events.js'
import { isAdmin, may, useSession } from '../session/session.js'
import { expirationFromInput, inputFromExpiration } from './expiration-date.js'
import { LicenseUsage } from './license-usage.js'
import { ProviderLinks } from './provider-links.js'

type LicenseId = LicenseResource['id']
type UpdateLicenseBody = Parameters<KeyturnClient['updateLicense']>[1]
type CreateLicenseTokenBody = NonNullable<Parameters<KeyturnClient['createLicenseToken']>[1]>

type RenewLicenseBody = NonNullable<Parameters<KeyturnClient['renewLicense']>[1]>

export function LicenseDetailScreen() {
  const session = useSession()
  const { client } = session
  const id = (useParams().id ?? '') as LicenseId // the route's :id; the API answers 404 for a bad one
  const license = useQuery({ queryKey: ['license', id], queryFn: () => client.getLicense(id) })
  const product = useQuery({
    queryKey: ['product', license.data?.productId],
    queryFn: () => client.getProduct(license.data?.productId ?? 'prd_'),
    enabled: license.data !== undefined,
  })
  const customerId = license.data?.customerId ?? null
  const customer = useQuery({
    queryKey: ['customer', customerId],
    queryFn: () => client.getCustomer(customerId ?? 'cus_'),
    enabled: customerId !== null,
  })
  const policyId = license.data?.policyId ?? null
  const policy = useQuery({
    queryKey: ['policy', policyId],
    queryFn: () => client.getPolicy(policyId ?? 'pol_'),
    enabled: policyId !== null,
  })
  return (
    <>
      <p>
        <Link to="/licenses">← Licenses</Link>
      </p>
      <ProblemMessage error={license.error} />
      {license.data && (
        <>
          <h1>
            License <code>{license.data.key}</code>
          </h1>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <span className={`badge ${license.data.status}`}>{license.data.status}</span>
            </dd>
            <dt>Id</dt>
            <dd>
              <code>{license.data.id}</code>
            </dd>
            <dt>Product</dt>
            <dd>
              <Link to={`/products/${license.data.productId}`}>
                {product.data?.name ?? license.data.productId}
              </Link>
            </dd>
            <dt>Activations</dt>
            <dd>
              {license.data.activationCount} of {license.data.maxActivations ?? 'unlimited'}
            </dd>
            <dt>Expires</dt>
            <dd>
              <Time value={license.data.expirationDate} empty="Never" />
            </dd>
            <dt>Customer</dt>
            <dd>
              {license.data.customerId === null ? (
                'None'
              ) : (
                <Link to={`/customers/${license.data.customerId}`}>
                  {customer.data?.email ?? license.data.customerId}
                </Link>
              )}
            </dd>
            <dt>Policy</dt>
            <dd>
              {license.data.policyId === null ? (
                'None'
              ) : (
                <Link to={`/policies/${license.data.policyId}`}>
                  {policy.data?.name ?? license.data.policyId}
                </Link>
              )}
            </dd>
            <dt>Seats</dt>
            <dd>{seatTerms(license.data.heartbeatTtl)}</dd>
            <dt>Entitlements</dt>
            <dd>{license.data.entitlements.join(', ') || 'None'}</dd>
            <dt>Metadata</dt>
            <dd>
              <MetadataList metadata={license.data.metadata} />
            </dd>
            <dt>Created</dt>
            <dd>
              <Time value={license.data.createdAt} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time value={license.data.updatedAt} />
            </dd>
          </dl>
          <ProviderLinks license={license.data} />
          {may(session, 'support') && <RevokeOrReinstate license={license.data} />}
          {isAdmin(session) && (
            <>
              <RenewForm license={license.data} />
              <UpdateLicenseForm license={license.data} />
              <ChangePolicyForm license={license.data} />
              <IssueTokenForm license={license.data} />
            </>
          )}
          <ValidateForm license={license.data} />
          <LicenseUsage license={license.data} />
          <Activations license={license.data} />
          <LicenseEvents license={license.data} />
        </>
      )}
    </>
  )
}

function RevokeOrReinstate({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const change = useMutation({
    mutationFn: () =>
      license.statusDetails.isRevoked
        ? client.reinstateLicense(license.id)
        : client.revokeLicense(license.id),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  return (
    <section aria-labelledby="revocation">
      <h2 id="revocation">Revocation</h2>
      {license.statusDetails.isRevoked ? (
        <ConfirmButton
          label="Reinstate license"
          title="Reinstate this license?"
          confirmLabel="Reinstate"
          onConfirm={() => change.mutate()}
        >
          <p>The license becomes usable again (unless it has expired).</p>
        </ConfirmButton>
      ) : (
        <ConfirmButton
          label="Revoke license"
          title="Revoke this license?"
          confirmLabel="Revoke"
          danger
          onConfirm={() => change.mutate()}
        >
          <p>
            Validation answers <code>revoked</code> and no new token is issued. You can reinstate it later.
          </p>
        </ConfirmButton>
      )}
      <ProblemMessage error={change.error} />
    </section>
  )
}

/** An empty field means "unlimited" / "never"; a field left as it was is not sent. */
function toUpdateBody(form: FormData, license: LicenseResource): UpdateLicenseBody {
  const body: UpdateLicenseBody = {}
  const maxActivations = String(form.get('maxActivations') ?? '').trim()
  const nextMax = maxActivations === '' ? null : Number(maxActivations)
  if (nextMax !== license.maxActivations) {
    body.maxActivations = nextMax
  }
  const date = String(form.get('expirationDate') ?? '')
  if (date !== inputFromExpiration(license.expirationDate)) {
    body.expirationDate = expirationFromInput(date)
  }
  const ttlMinutes = String(form.get('heartbeatMinutes') ?? '').trim()
  const nextTtl = ttlMinutes === '' ? null : Math.round(Number(ttlMinutes) * 60)
  if (nextTtl !== license.heartbeatTtl) {
    body.heartbeatTtl = nextTtl
  }
  const maxUses = String(form.get('maxUses') ?? '').trim()
  const nextMaxUses = maxUses === '' ? null : Number(maxUses)
  if (nextMaxUses !== license.maxUses) {
    body.maxUses = nextMaxUses
  }
  const customerId = String(form.get('customerId') ?? '').trim()
  if (customerId !== (license.customerId ?? '')) {
    body.customerId = (customerId === '' ? null : customerId) as UpdateLicenseBody['customerId'] // the API checks it
  }
  const codes = parseCodes(form.get('entitlements'))
  if (codes.join(',') !== license.entitlements.join(',')) {
    body.entitlements = codes as UpdateLicenseBody['entitlements'] // the API checks each code
  }
  const metadata = parseJsonObject(form.get('metadata'), 'Metadata')
  if (metadata !== undefined) {
    body.metadata = metadata
  }
  return body
}

function UpdateLicenseForm({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const update = useMutation({
    mutationFn: (form: FormData) => client.updateLicense(license.id, toUpdateBody(form, license)),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Update</h2>
      <form
        className="filters"
        aria-labelledby={`${id}-heading`}
        key={license.updatedAt}
        onSubmit={(event) => {
          event.preventDefault()
          update.mutate(new FormData(event.currentTarget))
        }}
      >
        <div>
          <label htmlFor={`${id}-max`}>Maximum activations (empty: unlimited)</label>
          <input
            id={`${id}-max`}
            name="maxActivations"
            type="number"
            min={1}
            step={1}
            defaultValue={license.maxActivations ?? ''}
          />
        </div>
        <div>
          <label htmlFor={`${id}-expires`}>Expires on (UTC, end of day; empty: never)</label>
          <input
            id={`${id}-expires`}
            name="expirationDate"
            type="date"
            defaultValue={inputFromExpiration(license.expirationDate)}
          />
        </div>
        <div>
          <label htmlFor={`${id}-lease`}>Floating seat lease, minutes (empty: none)</label>
          <input
            id={`${id}-lease`}
            name="heartbeatMinutes"
            type="number"
            min={1}
            step="any"
            defaultValue={license.heartbeatTtl === null ? '' : minutes(license.heartbeatTtl)}
          />
        </div>
        <div>
          <label htmlFor={`${id}-uses`}>Maximum uses (empty: unmetered)</label>
          <input
            id={`${id}-uses`}
            name="maxUses"
            type="number"
            min={1}
            step={1}
            defaultValue={license.maxUses ?? ''}
          />
        </div>
        <div>
          <label htmlFor={`${id}-customer`}>Customer id (empty: none)</label>
          <input id={`${id}-customer`} name="customerId" defaultValue={license.customerId ?? ''} />
        </div>
        <div>
          <label htmlFor={`${id}-codes`}>Entitlements (comma-separated)</label>
          <input id={`${id}-codes`} name="entitlements" defaultValue={license.entitlements.join(', ')} />
        </div>
        <MetadataField />
        <div className="actions">
          <button type="submit" disabled={update.isPending}>
            Save changes
          </button>
        </div>
      </form>
      <ProblemMessage error={update.error} />
      {update.isSuccess && <p role="status">Saved.</p>}
    </section>
  )
}

/**
 * A plan change: the license moves to another policy of its product (or none), its seats, lease and
 * uses from the new policy, its expiry kept or reset. Machines above a lower limit stay activated.
 */
function ChangePolicyForm({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const policies = useQuery({
    queryKey: ['policies', 'of', license.productId],
    queryFn: () =>
      client.listPolicies({ limit: 100, sort: 'name:asc', filter: `productId:eq:${license.productId}` }),
  })
  const move = useMutation({
    mutationFn: (form: FormData) => {
      const policyId = String(form.get('policyId') ?? '')
      return client.updateLicense(license.id, {
        policyId: (policyId === '' ? null : policyId) as UpdateLicenseBody['policyId'], // one of the listed ids
        expiry: form.get('expiry') === 'reset' ? 'reset' : 'keep',
      })
    },
    onSuccess: () => queryClient.invalidateQueries(),
  })
  const names = new Map((policies.data?.data ?? []).map((policy) => [policy.id, policy.name]))
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Change plan</h2>
      <form
        className="filters"
        aria-labelledby={`${id}-heading`}
        key={license.updatedAt}
        onSubmit={(event) => {
          event.preventDefault()
          move.mutate(new FormData(event.currentTarget))
        }}
      >
        <div>
          <label htmlFor={`${id}-policy`}>Move to policy</label>
          <select id={`${id}-policy`} name="policyId" defaultValue={license.policyId ?? ''}>
            <option value="">No policy</option>
            {(policies.data?.data ?? []).map((policy) => (
              <option key={policy.id} value={policy.id}>
                {policy.name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-expiry`}>Expiry</label>
          <select id={`${id}-expiry`} name="expiry" defaultValue="keep">
            <option value="keep">Keep the expiration date</option>
            <option value="reset">Start again from the new policy</option>
          </select>
        </div>
        <div className="actions">
          <button type="submit" disabled={move.isPending || !policies.isSuccess}>
            Move license
          </button>
        </div>
      </form>
      <ProblemMessage error={policies.error ?? move.error} />
      {move.isSuccess && (
        <p role="status">
          Moved to{' '}
          {move.data.policyId === null ? 'no policy' : (names.get(move.data.policyId) ?? move.data.policyId)}:{' '}
          {move.data.maxActivations === null ? 'unlimited' : move.data.maxActivations} activations, expires{' '}
          <Time value={move.data.expirationDate} empty="never" />.
        </p>
      )}
    </section>
  )
}

/** Renewal: max(now, expiration) + the duration given, or the policy's. Idempotent per form, so a double submit renews once. */
function RenewForm({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const [attempt, setAttempt] = useState(() => crypto.randomUUID())
  const renew = useMutation({
    mutationFn: (days: string) => {
      const body: RenewLicenseBody = days === '' ? {} : { duration: Math.round(Number(days) * 86_400) }
      return client.renewLicense(license.id, body, { idempotencyKey: `dashboard-renew-${attempt}` })
    },
    onSuccess: async () => {
      setAttempt(crypto.randomUUID())
      await queryClient.invalidateQueries()
    },
  })
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Renew</h2>
      <form
        className="filters"
        aria-labelledby={`${id}-heading`}
        onSubmit={(event) => {
          event.preventDefault()
          renew.mutate(String(new FormData(event.currentTarget).get('days') ?? '').trim())
        }}
      >
        <div>
          <label htmlFor={`${id}-days`}>Extend by days (empty: the policy's duration)</label>
          <input id={`${id}-days`} name="days" type="number" min={0.05} step="any" />
        </div>
        <div className="actions">
          <button type="submit" disabled={renew.isPending}>
            Renew license
          </button>
        </div>
      </form>
      <ProblemMessage error={renew.error} />
      {renew.isSuccess && (
        <p role="status">
          Renewed: expires <Time value={renew.data.expirationDate} empty="never" />.
        </p>
      )}
    </section>
  )
}

function IssueTokenForm({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const [payloadError, setPayloadError] = useState<string>()
  const issue = useMutation({
    mutationFn: (body: CreateLicenseTokenBody) => client.createLicenseToken(license.id, body),
    // The issue is an event: Recent events shows it.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['events'] }),
  })
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Issue a token</h2>
      <p className="muted">
        A signed token an application verifies offline with the product&apos;s public key.
      </p>
      <form
        className="stacked"
        aria-labelledby={`${id}-heading`}
        onSubmit={(event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          const body: CreateLicenseTokenBody = {}
          const payload = String(form.get('customPayload') ?? '').trim()
          if (payload !== '') {
            try {
              body.customPayload = JSON.parse(payload)
            } catch {
              setPayloadError('Custom fields must be a JSON object, e.g. {"plan": "pro"}.')
              return
            }
          }
          setPayloadError(undefined)
          const ttlDays = String(form.get('ttlDays') ?? '').trim()
          if (ttlDays !== '') {
            body.ttl = Math.round(Number(ttlDays) * 86_400)
          }
          const fingerprint = String(form.get('fingerprint') ?? '').trim()
          if (fingerprint !== '') {
            body.fingerprint = fingerprint
          }
          issue.mutate(body)
        }}
      >
        <label htmlFor={`${id}-payload`}>Custom fields (JSON object, optional)</label>
        <textarea id={`${id}-payload`} name="customPayload" rows={2} spellCheck={false} />
        {payloadError && (
          <p role="alert" className="problem">
            {payloadError}
          </p>
        )}
        <label htmlFor={`${id}-ttl`}>Lifetime in days (optional, default 30)</label>
        <input id={`${id}-ttl`} name="ttlDays" type="number" min={1} step="any" />
        <label htmlFor={`${id}-fingerprint`}>Machine fingerprint (optional; binds the token to it)</label>
        <input id={`${id}-fingerprint`} name="fingerprint" maxLength={256} />
        <div className="actions">
          <button type="submit" disabled={issue.isPending}>
            Issue token
          </button>
        </div>
      </form>
      <ProblemMessage error={issue.error} />
      {issue.data && (
        <div className="result">
          <label htmlFor={`${id}-token`}>
            Token (expires {formatTime(issue.data.payload.expirationDate)})
          </label>
          <textarea id={`${id}-token`} readOnly rows={4} value={issue.data.token} spellCheck={false} />
          <CopyButton value={issue.data.token} label="Copy token" />
        </div>
      )}
    </section>
  )
}

function ValidateForm({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const validate = useMutation({
    mutationFn: (form: FormData) => {
      const fingerprint = String(form.get('fingerprint') ?? '').trim()
      const entitlements = parseCodes(form.get('entitlements'))
      return client.validateLicense({
        key: license.key,
        productId: license.productId,
        ...(fingerprint === '' ? {} : { fingerprint }),
        ...(entitlements.length === 0 ? {} : { entitlements: entitlements as never[] }), // the API checks each code
      })
    },
    // A recorded validation is an event of the license.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['events'] }),
  })
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Validate as an application would</h2>
      <form
        className="filters"
        aria-labelledby={`${id}-heading`}
        onSubmit={(event) => {
          event.preventDefault()
          validate.mutate(new FormData(event.currentTarget))
        }}
      >
        <div>
          <label htmlFor={`${id}-fingerprint`}>Machine fingerprint (optional)</label>
          <input id={`${id}-fingerprint`} name="fingerprint" maxLength={256} />
        </div>
        <div>
          <label htmlFor={`${id}-codes`}>Required entitlements (optional)</label>
          <input id={`${id}-codes`} name="entitlements" />
        </div>
        <div className="actions">
          <button type="submit" disabled={validate.isPending}>
            Validate
          </button>
        </div>
      </form>
      <ProblemMessage error={validate.error} />
      {validate.data && (
        <p role="status" className={validate.data.isValid ? 'valid' : 'invalid'}>
          {validate.data.isValid ? 'Valid' : `Not valid: ${validate.data.reason}`} (checked{' '}
          {formatTime(validate.data.timestamp)})
        </p>
      )}
    </section>
  )
}

function Activations({ license }: { license: LicenseResource }) {
  const session = useSession()
  const { client } = session
  const queryClient = useQueryClient()
  const activations = useQuery({
    queryKey: ['activations', license.id],
    queryFn: () => client.listActivations(license.id, { limit: 100 }),
  })
  const remove = useMutation({
    mutationFn: (activationId: Parameters<KeyturnClient['deleteActivation']>[0]) =>
      client.deleteActivation(activationId),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  return (
    <section aria-labelledby="activations-heading">
      <h2 id="activations-heading">Activations</h2>
      <ProblemMessage error={activations.error ?? remove.error} />
      {activations.data &&
        (activations.data.totalCount === 0 ? (
          <p>No machine is activated.</p>
        ) : (
          <table>
            <caption className="visually-hidden">Activations</caption>
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
              {activations.data.data.map((activation) => (
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
                        label={`Deactivate ${activation.name ?? activation.fingerprint}`}
                        title="Deactivate this machine?"
                        confirmLabel="Deactivate"
                        danger
                        onConfirm={() => remove.mutate(activation.id)}
                      >
                        <p>The machine loses its seat; it can activate again while seats are free.</p>
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {activations.data && activations.data.totalCount > activations.data.data.length && (
        <p className="muted">
          Showing the latest {activations.data.data.length} of {activations.data.totalCount}.
        </p>
      )}
    </section>
  )
}
