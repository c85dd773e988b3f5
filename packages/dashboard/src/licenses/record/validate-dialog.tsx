import type { LicenseResource } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { ActionDialog } from '../../components/action-dialog.js'
import { formatTime } from '../../components/format.js'
import { parseCodes } from '../../components/metadata.js'
import { ProblemMessage } from '../../components/problem-message.js'
import { useSession } from '../../session/session.js'

/** Validates the license as an application would (by key), with the answer in the dialog. */
export function ValidateDialog({
  license,
  onClose,
}: {
  readonly license: LicenseResource
  readonly onClose: () => void
}) {
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
    <ActionDialog title="Validate as an application would" onClose={onClose}>
      <form
        className="stacked"
        aria-label="Validate as an application would"
        onSubmit={(event) => {
          event.preventDefault()
          validate.mutate(new FormData(event.currentTarget))
        }}
      >
        <label htmlFor={`${id}-fingerprint`}>Machine fingerprint (optional)</label>
        <input id={`${id}-fingerprint`} name="fingerprint" maxLength={256} />
        <label htmlFor={`${id}-codes`}>Required entitlements (optional)</label>
        <input id={`${id}-codes`} name="entitlements" />
        <ProblemMessage error={validate.error} />
        <div className="actions">
          <Button type="submit" loading={validate.isPending}>
            Validate
          </Button>
        </div>
      </form>
      {validate.data && (
        <p role="status" className={validate.data.isValid ? 'valid' : 'invalid'}>
          {validate.data.isValid ? 'Valid' : `Not valid: ${validate.data.reason}`} (checked{' '}
          {formatTime(validate.data.timestamp)})
        </p>
      )}
    </ActionDialog>
  )
}
