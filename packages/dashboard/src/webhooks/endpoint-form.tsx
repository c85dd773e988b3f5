import type { KeyturnClient } from '@keyturn/client'
import { useId } from 'react'

type EndpointResource = Awaited<ReturnType<KeyturnClient['getWebhookEndpoint']>>
export type EndpointFields = Omit<Parameters<KeyturnClient['createWebhookEndpoint']>[0], 'productId'>

/** URL, description, event types (comma-separated patterns such as `license.*`) and whether it is on. */
export function toEndpointFields(form: FormData): EndpointFields {
  const description = String(form.get('description') ?? '').trim()
  return {
    url: String(form.get('url') ?? '').trim(),
    description: description === '' ? null : description,
    eventTypes: String(form.get('eventTypes') ?? '')
      .split(/[\s,]+/)
      .filter((pattern) => pattern !== ''),
    enabled: form.get('enabled') === 'on',
  }
}

export function EndpointFieldset({ endpoint }: { endpoint?: EndpointResource }) {
  const id = useId()
  return (
    <>
      <label htmlFor={`${id}-url`}>URL</label>
      <input
        id={`${id}-url`}
        name="url"
        type="url"
        required
        maxLength={2048}
        placeholder="https://billing.example.com/keyturn"
        defaultValue={endpoint?.url}
      />
      <label htmlFor={`${id}-description`}>Description (optional)</label>
      <input
        id={`${id}-description`}
        name="description"
        maxLength={500}
        defaultValue={endpoint?.description ?? ''}
      />
      <label htmlFor={`${id}-types`}>Event types</label>
      <input
        id={`${id}-types`}
        name="eventTypes"
        required
        defaultValue={endpoint?.eventTypes.join(', ') ?? '*'}
        aria-describedby={`${id}-types-help`}
      />
      <p id={`${id}-types-help`} className="muted">
        Comma-separated: a type (<code>license.revoked</code>), every type of a resource (
        <code>license.*</code>) or everything (<code>*</code>).
      </p>
      <div className="checkbox">
        <input
          id={`${id}-enabled`}
          name="enabled"
          type="checkbox"
          defaultChecked={endpoint?.enabled ?? true}
        />
        <label htmlFor={`${id}-enabled`}>Enabled</label>
      </div>
    </>
  )
}
