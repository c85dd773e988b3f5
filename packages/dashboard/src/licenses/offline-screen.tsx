import { Button, FileInput, Textarea, TextInput } from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId } from 'react'
import { Link } from 'react-router'
import { CopyButton } from '../components/copy-button.js'
import { FormButtons } from '../components/form-layout.js'
import { formatTime } from '../components/format.js'
import { MutationForm } from '../components/mutation-form.js'
import { useTextDownload } from '../components/text-download.js'
import { useSession } from '../session/session.js'

type ActivationId = Parameters<ReturnType<typeof useSession>['client']['deactivateOffline']>[0]

/**
 * Air-gapped machines (docs/guides/offline.md): a request file in, the machine's license file out;
 * a deactivation code read out by the user frees the machine's seat.
 */
export function OfflineScreen() {
  return (
    <>
      <p>
        <Link to="/licenses">← Licenses</Link>
      </p>
      <h1>Offline activation</h1>
      <p className="muted">
        For machines without a network: their application writes an activation request file and, when it gives
        its seat back, shows a deactivation code.
      </p>
      <ProcessRequest />
      <EnterCode />
    </>
  )
}

/** The request's text: what was pasted, else the chosen file's. */
async function requestText(form: FormData): Promise<string> {
  const pasted = String(form.get('request') ?? '').trim()
  const file = form.get('requestFile')
  if (pasted === '' && file instanceof File && file.size > 0) {
    return file.text()
  }
  return pasted
}

function ProcessRequest() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const activate = useMutation({
    mutationFn: async (form: FormData) => client.activateOffline({ request: await requestText(form) }),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  const answer = activate.data
  const download = useTextDownload(answer?.licenseFile)
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Process a request file</h2>
      <MutationForm aria-label="Process a request file" mutation={activate} submitLabel="Activate machine">
        <FileInput
          label="Request file"
          name="requestFile"
          accept=".request,.txt,text/plain"
          placeholder="Choose a file"
          clearable
        />
        <Textarea
          label="Or paste the request"
          className="monospace"
          name="request"
          rows={6}
          spellCheck={false}
        />
      </MutationForm>
      {answer !== undefined && (
        <div role="status">
          <p>
            Activated <strong>{answer.activation.name ?? answer.activation.fingerprint}</strong> (
            <code>{answer.activation.id}</code>) on{' '}
            <Link to={`/licenses/${answer.activation.licenseId}`}>{answer.activation.licenseId}</Link>. Its
            license file expires {answer.expiresAt === null ? 'never' : formatTime(answer.expiresAt)}.
          </p>
          <FormButtons>
            <Button
              component="a"
              variant="default"
              href={download}
              download={`${answer.activation.fingerprint}.license`}
            >
              Download license file
            </Button>
            <CopyButton value={answer.licenseFile} label="Copy license file" />
          </FormButtons>
        </div>
      )}
    </section>
  )
}

function EnterCode() {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const id = useId()
  const deactivate = useMutation({
    mutationFn: async (form: FormData) => {
      const activationId = String(form.get('activationId') ?? '').trim() as ActivationId // the API checks it
      await client.deactivateOffline(activationId, { code: String(form.get('code') ?? '') })
      return activationId
    },
    onSuccess: () => queryClient.invalidateQueries(),
  })
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Enter a deactivation code</h2>
      <MutationForm
        aria-label="Enter a deactivation code"
        mutation={deactivate}
        submitLabel="Deactivate machine"
      >
        <TextInput
          label="Activation id"
          name="activationId"
          placeholder="act_…"
          autoComplete="off"
          required
        />
        <TextInput
          label="Deactivation code"
          description="As the user reads it: case, dashes and spaces do not matter. Five wrong codes lock the machine's offline deactivation for an hour."
          name="code"
          placeholder="XXXX-XXXX-XXXX-XXXX"
          autoComplete="off"
          spellCheck={false}
          required
        />
      </MutationForm>
      {deactivate.data !== undefined && (
        <p role="status">
          Deactivated <code>{deactivate.data}</code>: its seat is free.
        </p>
      )}
    </section>
  )
}
