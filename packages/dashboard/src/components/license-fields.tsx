/**
 * @module The fields a license and a policy share, for the forms that create or edit either (the
 * new license screen, the license's edit dialog, the policy form): one place for each field's name,
 * bounds and wording. Each is uncontrolled and read from the form's `FormData` by its `name`; an
 * empty number field means what its label says (unlimited, none, unmetered).
 */
import { TextInput, type TextInputProps } from '@mantine/core'
import type { ReactNode } from 'react'

/** A number typed in a text box of type number: the browser keeps to `min`, `max` and `step`. */
export function NumberField(props: TextInputProps) {
  return <TextInput type="number" {...props} />
}

interface SharedFieldProps {
  readonly label?: string
  readonly description?: ReactNode
  readonly defaultValue?: number | string | undefined
}

export function MaxActivationsField({
  label = 'Maximum activations (empty: unlimited)',
  ...props
}: SharedFieldProps) {
  return <NumberField label={label} name="maxActivations" min={1} step={1} {...props} />
}

/** A floating seat's lease in minutes (the license or policy holds seconds). */
export function LeaseMinutesField({
  label = 'Floating seat lease, minutes (empty: none)',
  ...props
}: SharedFieldProps) {
  return <NumberField label={label} name="heartbeatMinutes" min={1} step="any" {...props} />
}

export function MaxUsesField({ label = 'Maximum uses (empty: unmetered)', ...props }: SharedFieldProps) {
  return <NumberField label={label} name="maxUses" min={1} step={1} {...props} />
}

/** Entitlement codes as a comma- or space-separated list; `parseCodes` reads it. */
export function EntitlementsField({
  label = 'Entitlements (codes, comma-separated)',
  ...props
}: SharedFieldProps) {
  return <TextInput label={label} name="entitlements" {...props} />
}
