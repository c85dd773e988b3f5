import type { KeyturnClient } from '@keyturn/client'
import { Checkbox, TextInput } from '@mantine/core'

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
  return (
    <>
      <TextInput
        label="URL"
        name="url"
        type="url"
        required
        maxLength={2048}
        placeholder="https://billing.example.com/keyturn"
        defaultValue={endpoint?.url}
      />
      <TextInput
        label="Description (optional)"
        name="description"
        maxLength={500}
        defaultValue={endpoint?.description ?? ''}
      />
      <TextInput
        label="Event types"
        name="eventTypes"
        required
        defaultValue={endpoint?.eventTypes.join(', ') ?? '*'}
        description={
          <>
            Comma-separated: a type (<code>license.revoked</code>), every type of a resource (
            <code>license.*</code>) or everything (<code>*</code>).
          </>
        }
      />
      <Checkbox label="Enabled" name="enabled" defaultChecked={endpoint?.enabled ?? true} />
    </>
  )
}
