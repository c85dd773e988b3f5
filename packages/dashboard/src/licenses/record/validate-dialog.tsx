import type { LicenseResource } from '@keyturn/client'
import { TextInput } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ActionDialog } from '../../components/action-dialog.js'
import { formatTime } from '../../components/format.js'
import { parseCodes } from '../../components/metadata.js'
import { MutationForm } from '../../components/mutation-form.js'
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
      <MutationForm aria-label="Validate as an application would" mutation={validate} submitLabel="Validate">
        <TextInput label="Machine fingerprint (optional)" name="fingerprint" maxLength={256} />
        <TextInput label="Required entitlements (optional)" name="entitlements" />
      </MutationForm>
      {validate.data && (
        <p role="status" className={validate.data.isValid ? 'valid' : 'invalid'}>
          {validate.data.isValid ? 'Valid' : `Not valid: ${validate.data.reason}`} (checked{' '}
          {formatTime(validate.data.timestamp)})
        </p>
      )}
    </ActionDialog>
  )
}
