import type { KeyturnClient, LicenseResource } from '@keyturn/client'
import { Button, NativeSelect, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { ActionDialog } from '../../components/action-dialog.js'
import { FieldStack, FormButtons } from '../../components/form-layout.js'
import { formatTime, minutes } from '../../components/format.js'
import {
  EntitlementsField,
  LeaseMinutesField,
  MaxActivationsField,
  MaxUsesField,
} from '../../components/license-fields.js'
import { MetadataField, parseCodes, parseJsonObject } from '../../components/metadata.js'
import { MutationForm } from '../../components/mutation-form.js'
import { notifyDone } from '../../components/notify.js'
import { ProblemMessage } from '../../components/problem-message.js'
import { useSession } from '../../session/session.js'
import { expirationFromInput, inputFromExpiration } from '../expiration-date.js'

type UpdateLicenseBody = Parameters<KeyturnClient['updateLicense']>[1]

interface DialogProps {
  readonly license: LicenseResource
  readonly onClose: () => void
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

/** The license's own fields; saved, the dialog closes and says so. */
export function EditDialog({ license, onClose }: DialogProps) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const update = useMutation({
    mutationFn: (form: FormData) => client.updateLicense(license.id, toUpdateBody(form, license)),
    onSuccess: async () => {
      notifyDone('License saved.')
      onClose()
      await queryClient.invalidateQueries()
    },
  })
  return (
    <ActionDialog title="Edit this license" onClose={onClose}>
      <MutationForm aria-label="Edit this license" mutation={update} submitLabel="Save changes">
        <MaxActivationsField defaultValue={license.maxActivations ?? ''} />
        <TextInput
          label="Expires on (UTC, end of day; empty: never)"
          name="expirationDate"
          type="date"
          defaultValue={inputFromExpiration(license.expirationDate)}
        />
        <LeaseMinutesField
          defaultValue={license.heartbeatTtl === null ? '' : minutes(license.heartbeatTtl)}
        />
        <MaxUsesField defaultValue={license.maxUses ?? ''} />
        <TextInput
          label="Customer id (empty: none)"
          name="customerId"
          defaultValue={license.customerId ?? ''}
        />
        <EntitlementsField
          label="Entitlements (comma-separated)"
          defaultValue={license.entitlements.join(', ')}
        />
        <MetadataField />
      </MutationForm>
    </ActionDialog>
  )
}

/**
 * A plan change: the license moves to another policy of its product (or none), its seats, lease and
 * uses from the new policy, its expiry kept or reset. Machines above a lower limit stay activated.
 */
export function ChangePlanDialog({ license, onClose }: DialogProps) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const policies = useQuery({
    queryKey: ['policies', 'of', license.productId],
    queryFn: () =>
      client.listPolicies({ limit: 100, sort: 'name:asc', filter: `productId:eq:${license.productId}` }),
  })
  const names = new Map((policies.data?.data ?? []).map((policy) => [policy.id as string, policy.name]))
  const move = useMutation({
    mutationFn: (form: FormData) => {
      const policyId = String(form.get('policyId') ?? '')
      return client.updateLicense(license.id, {
        policyId: (policyId === '' ? null : policyId) as UpdateLicenseBody['policyId'], // one of the listed ids
        expiry: form.get('expiry') === 'reset' ? 'reset' : 'keep',
      })
    },
    onSuccess: async (moved) => {
      const policy = moved.policyId === null ? 'no policy' : (names.get(moved.policyId) ?? moved.policyId)
      const seats = moved.maxActivations === null ? 'unlimited' : moved.maxActivations
      notifyDone(
        `Moved to ${policy}: ${seats} activations, expires ${formatTime(moved.expirationDate, 'never')}.`,
      )
      onClose()
      await queryClient.invalidateQueries()
    },
  })
  return (
    <ActionDialog title="Change plan" onClose={onClose}>
      <form
        aria-label="Change plan"
        onSubmit={(event) => {
          event.preventDefault()
          move.mutate(new FormData(event.currentTarget))
        }}
      >
        <FieldStack>
          <NativeSelect label="Move to policy" name="policyId" defaultValue={license.policyId ?? ''}>
            <option value="">No policy</option>
            {(policies.data?.data ?? []).map((policy) => (
              <option key={policy.id} value={policy.id}>
                {policy.name}
              </option>
            ))}
          </NativeSelect>
          <NativeSelect label="Expiry" name="expiry" defaultValue="keep">
            <option value="keep">Keep the expiration date</option>
            <option value="reset">Start again from the new policy</option>
          </NativeSelect>
          <ProblemMessage error={policies.error ?? move.error} />
          <FormButtons>
            <Button type="submit" loading={move.isPending} disabled={!policies.isSuccess}>
              Move license
            </Button>
          </FormButtons>
        </FieldStack>
      </form>
    </ActionDialog>
  )
}
