import type { KeyturnClient, LicenseResource } from '@keyturn/client'
import { Button, Checkbox, Textarea, TextInput } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useRef, useState } from 'react'
import { ActionDialog } from '../../components/action-dialog.js'
import { CopyButton } from '../../components/copy-button.js'
import { FieldStack, FormButtons } from '../../components/form-layout.js'
import { formatTime } from '../../components/format.js'
import { NumberField } from '../../components/license-fields.js'
import { parseJsonObject } from '../../components/metadata.js'
import { MutationForm } from '../../components/mutation-form.js'
import { ProblemMessage } from '../../components/problem-message.js'
import { useTextDownload } from '../../components/text-download.js'
import { useSession } from '../../session/session.js'

type CreateLicenseTokenBody = NonNullable<Parameters<KeyturnClient['createLicenseToken']>[1]>

interface DialogProps {
  readonly license: LicenseResource
  readonly onClose: () => void
}

/** A signed token an application verifies offline; shown once, in the dialog, to copy. */
export function IssueTokenDialog({ license, onClose }: DialogProps) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const [payloadError, setPayloadError] = useState<string>()
  const payloadField = useRef<HTMLTextAreaElement>(null)
  const issue = useMutation({
    mutationFn: (body: CreateLicenseTokenBody) => client.createLicenseToken(license.id, body),
    // The issue is an event: the license's events show it.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['events'] }),
  })
  return (
    <ActionDialog title="Issue a token" onClose={onClose}>
      <p className="muted">
        A signed token an application verifies offline with the product&apos;s public key.
      </p>
      <form
        aria-label="Issue a token"
        onSubmit={(event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          const body: CreateLicenseTokenBody = {}
          try {
            const payload = parseJsonObject(form.get('customPayload'), 'Custom fields')
            if (payload !== undefined) {
              body.customPayload = payload
            }
          } catch (error) {
            // Said under the field, which takes the focus so that a screen reader reads it out.
            setPayloadError((error as Error).message)
            payloadField.current?.focus()
            return
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
        <FieldStack>
          <Textarea
            ref={payloadField}
            label="Custom fields (JSON object, optional)"
            className="monospace"
            name="customPayload"
            rows={2}
            spellCheck={false}
            error={payloadError}
          />
          <NumberField label="Lifetime in days (optional, default 30)" name="ttlDays" min={1} step="any" />
          <TextInput
            label="Machine fingerprint (optional; binds the token to it)"
            name="fingerprint"
            maxLength={256}
          />
          <ProblemMessage error={issue.error} />
          <FormButtons>
            <Button type="submit" loading={issue.isPending}>
              Issue token
            </Button>
          </FormButtons>
        </FieldStack>
      </form>
      {issue.data && (
        <div className="result" role="status">
          <Textarea
            label={`Token (expires ${formatTime(issue.data.payload.expirationDate)})`}
            className="monospace"
            readOnly
            rows={4}
            value={issue.data.token}
            spellCheck={false}
          />
          <CopyButton value={issue.data.token} label="Copy token" />
        </div>
      )}
    </ActionDialog>
  )
}

/** A signed license file for offline use, to download or copy; shown once, in the dialog. */
export function IssueFileDialog({ license, onClose }: DialogProps) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const issue = useMutation({
    mutationFn: (form: FormData) => {
      const days = String(form.get('days') ?? '').trim()
      return client.createLicenseFile(license.id, {
        ...(days === '' ? {} : { ttl: Math.round(Number(days) * 86_400) }),
        encrypt: form.get('encrypt') === 'on',
      })
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['events'] }),
  })
  const answer = issue.data
  const download = useTextDownload(answer?.licenseFile)
  return (
    <ActionDialog title="Issue a license file" onClose={onClose}>
      <p className="muted">
        A signed file the application verifies offline with the product&apos;s public key; it carries the
        license as it is now.
      </p>
      <MutationForm aria-label="Issue a license file" mutation={issue} submitLabel="Issue license file">
        <NumberField
          label="Lifetime in days (optional; default the policy's, or a year)"
          name="days"
          min={1}
          step="any"
        />
        <Checkbox label="Encrypt it under the license key" name="encrypt" />
      </MutationForm>
      {answer !== undefined && (
        <div className="result" role="status">
          <p>
            License file issued; it expires{' '}
            {answer.expiresAt === null ? 'never' : formatTime(answer.expiresAt)}.
          </p>
          <FormButtons>
            <Button component="a" variant="default" href={download} download={`${license.id}.license`}>
              Download license file
            </Button>
            <CopyButton value={answer.licenseFile} label="Copy license file" />
          </FormButtons>
        </div>
      )}
    </ActionDialog>
  )
}
