import type { KeyturnClient, LicenseResource } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { ActionDialog } from '../../components/action-dialog.js'
import { CopyButton } from '../../components/copy-button.js'
import { formatTime } from '../../components/format.js'
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
  const id = useId()
  const [payloadError, setPayloadError] = useState<string>()
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
        className="stacked"
        aria-label="Issue a token"
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
        <ProblemMessage error={issue.error} />
        <div className="actions">
          <Button type="submit" loading={issue.isPending}>
            Issue token
          </Button>
        </div>
      </form>
      {issue.data && (
        <div className="result" role="status">
          <label htmlFor={`${id}-token`}>
            Token (expires {formatTime(issue.data.payload.expirationDate)})
          </label>
          <textarea id={`${id}-token`} readOnly rows={4} value={issue.data.token} spellCheck={false} />
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
  const id = useId()
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
      <form
        className="stacked"
        aria-label="Issue a license file"
        onSubmit={(event) => {
          event.preventDefault()
          issue.mutate(new FormData(event.currentTarget))
        }}
      >
        <label htmlFor={`${id}-days`}>
          Lifetime in days (optional; default the policy&apos;s, or a year)
        </label>
        <input id={`${id}-days`} name="days" type="number" min={1} step="any" />
        <div className="check">
          <input id={`${id}-encrypt`} name="encrypt" type="checkbox" />
          <label htmlFor={`${id}-encrypt`}>Encrypt it under the license key</label>
        </div>
        <ProblemMessage error={issue.error} />
        <div className="actions">
          <Button type="submit" loading={issue.isPending}>
            Issue license file
          </Button>
        </div>
      </form>
      {answer !== undefined && (
        <div className="result" role="status">
          <p>
            License file issued; it expires{' '}
            {answer.expiresAt === null ? 'never' : formatTime(answer.expiresAt)}.
          </p>
          <p className="actions">
            <a className="button" href={download} download={`${license.id}.license`}>
              Download license file
            </a>
            <CopyButton value={answer.licenseFile} label="Copy license file" />
          </p>
        </div>
      )}
    </ActionDialog>
  )
}
