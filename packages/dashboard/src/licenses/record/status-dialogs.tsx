import type { KeyturnClient, LicenseResource } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { ActionDialog } from '../../components/action-dialog.js'
import { FormButtons } from '../../components/form-layout.js'
import { formatTime } from '../../components/format.js'
import { NumberField } from '../../components/license-fields.js'
import { MutationForm } from '../../components/mutation-form.js'
import { notifyDone } from '../../components/notify.js'
import { ProblemMessage } from '../../components/problem-message.js'
import { useSession } from '../../session/session.js'

type RenewLicenseBody = NonNullable<Parameters<KeyturnClient['renewLicense']>[1]>

interface DialogProps {
  readonly license: LicenseResource
  readonly onClose: () => void
}

/** Revoke (or, for a revoked license, reinstate) after a confirmation; the result as a toast. */
export function RevokeDialog({ license, onClose }: DialogProps) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const revoked = license.statusDetails.isRevoked
  const change = useMutation({
    mutationFn: () => (revoked ? client.reinstateLicense(license.id) : client.revokeLicense(license.id)),
    onSuccess: async () => {
      notifyDone(revoked ? 'License reinstated.' : 'License revoked.')
      onClose()
      await queryClient.invalidateQueries()
    },
  })
  return (
    <ActionDialog title={revoked ? 'Reinstate this license?' : 'Revoke this license?'} onClose={onClose}>
      {revoked ? (
        <p>The license becomes usable again (unless it has expired).</p>
      ) : (
        <p>
          Validation answers <code>revoked</code> and no new token is issued. You can reinstate it later.
        </p>
      )}
      <ProblemMessage error={change.error} />
      <FormButtons>
        <Button
          color={revoked ? undefined : 'red.9'}
          loading={change.isPending}
          onClick={() => change.mutate()}
        >
          {revoked ? 'Reinstate' : 'Revoke'}
        </Button>
      </FormButtons>
    </ActionDialog>
  )
}

/** Renewal: max(now, expiration) + the duration given, or the policy's. Idempotent per dialog, so a double submit renews once. */
export function RenewDialog({ license, onClose }: DialogProps) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const [attempt] = useState(() => crypto.randomUUID())
  const renew = useMutation({
    mutationFn: (form: FormData) => {
      const days = String(form.get('days') ?? '').trim()
      const body: RenewLicenseBody = days === '' ? {} : { duration: Math.round(Number(days) * 86_400) }
      return client.renewLicense(license.id, body, { idempotencyKey: `dashboard-renew-${attempt}` })
    },
    onSuccess: async (renewed) => {
      notifyDone(`Renewed: expires ${formatTime(renewed.expirationDate, 'never')}.`)
      onClose()
      await queryClient.invalidateQueries()
    },
  })
  return (
    <ActionDialog title="Renew this license" onClose={onClose}>
      <MutationForm aria-label="Renew this license" mutation={renew} submitLabel="Renew license">
        <NumberField
          label="Extend by days (empty: the policy's duration)"
          description="It runs from its expiry (or from now, if it has expired) for the days given, or for its policy's duration."
          name="days"
          min={0.05}
          step="any"
        />
      </MutationForm>
    </ActionDialog>
  )
}
