import type { LicenseResource } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ConfirmButton } from '../components/confirm-button.js'
import { FieldRow, FormButtons } from '../components/form-layout.js'
import { NumberField } from '../components/license-fields.js'
import { ProblemMessage } from '../components/problem-message.js'
import { Time } from '../components/time.js'
import { Allowed, useSession } from '../session/session.js'

/** Metered usage: the count against the limit, recording uses by hand, and a reset after a confirmation. */
export function LicenseUsage({ license }: { license: LicenseResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = 'usage'
  const done = () => queryClient.invalidateQueries()
  const record = useMutation({
    mutationFn: (increment: number) => client.incrementLicenseUsage(license.id, { increment }),
    onSuccess: done,
  })
  const reset = useMutation({ mutationFn: () => client.resetLicenseUsage(license.id), onSuccess: done })
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Usage</h2>
      <p>
        {license.uses.toLocaleString('en')} of{' '}
        {license.maxUses === null ? 'unmetered' : license.maxUses.toLocaleString('en')} uses
        {license.usesResetAt !== null && (
          <>
            {' '}
            since <Time value={license.usesResetAt} />
          </>
        )}
        .
      </p>
      <Allowed least="admin">
        <form
          aria-labelledby={`${id}-heading`}
          onSubmit={(event) => {
            event.preventDefault()
            record.mutate(Number(new FormData(event.currentTarget).get('increment') ?? 1))
          }}
        >
          <FieldRow>
            <NumberField label="Uses to record" name="increment" min={1} step={1} defaultValue={1} />
            <FormButtons>
              <Button variant="default" type="submit" disabled={record.isPending}>
                Record usage
              </Button>
              <ConfirmButton
                label="Reset usage"
                title="Reset this license's usage?"
                confirmLabel="Reset to 0"
                danger
                onConfirm={() => reset.mutate()}
              >
                <p>The count goes back to 0 ({license.uses.toLocaleString('en')} uses are forgotten).</p>
              </ConfirmButton>
            </FormButtons>
          </FieldRow>
        </form>
      </Allowed>
      <ProblemMessage error={record.error ?? reset.error} />
    </section>
  )
}
