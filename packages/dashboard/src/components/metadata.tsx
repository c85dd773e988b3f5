import { Textarea } from '@mantine/core'

type MetadataValue = string | number | boolean

/** Metadata as a list of keys and values, rendered as text whatever they hold. */
export function MetadataList({ metadata }: { metadata: Readonly<Record<string, MetadataValue>> }) {
  const entries = Object.entries(metadata)
  if (entries.length === 0) {
    return <span className="muted">None</span>
  }
  return (
    <dl className="metadata">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>
            <code>{key}</code>
          </dt>
          <dd>{JSON.stringify(value)}</dd>
        </div>
      ))}
    </dl>
  )
}

/** A labelled JSON-object field for metadata; `parseJsonObject` reads it. */
export function MetadataField({
  name = 'metadata',
  defaultValue,
  help = 'A JSON object of strings, numbers and booleans, e.g. {"plan": "pro"}. On an update, null removes a key.',
}: {
  name?: string
  defaultValue?: Readonly<Record<string, unknown>> | undefined
  help?: string
}) {
  return (
    <Textarea
      label="Metadata (JSON, optional)"
      description={help}
      className="monospace"
      name={name}
      rows={2}
      spellCheck={false}
      defaultValue={defaultValue && Object.keys(defaultValue).length > 0 ? JSON.stringify(defaultValue) : ''}
    />
  )
}

/** The JSON object in a form field, undefined when empty; throws a sentence a person can act on. */
export function parseJsonObject(
  text: FormDataEntryValue | null,
  what: string,
): Record<string, never> | undefined {
  const trimmed = String(text ?? '').trim()
  if (trimmed === '') {
    return undefined
  }
  let value: unknown
  try {
    value = JSON.parse(trimmed)
  } catch {
    throw new Error(`${what} must be a JSON object, e.g. {"plan": "pro"}.`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${what} must be a JSON object, e.g. {"plan": "pro"}.`)
  }
  return value as Record<string, never> // the API validates each value and names a bad one
}

/** Entitlement codes typed as a comma- or space-separated list. */
export function parseCodes(text: FormDataEntryValue | null): string[] {
  return String(text ?? '')
    .split(/[\s,]+/)
    .filter((code) => code !== '')
}
