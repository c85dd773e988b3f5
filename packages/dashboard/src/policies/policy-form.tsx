import type { KeyturnClient } from '@keyturn/client'
import { Checkbox, NativeSelect, TextInput } from '@mantine/core'
import {
  EntitlementsField,
  LeaseMinutesField,
  MaxActivationsField,
  MaxUsesField,
  NumberField,
} from '../components/license-fields.js'
import { MetadataField, parseCodes, parseJsonObject } from '../components/metadata.js'

type PolicyResource = Awaited<ReturnType<KeyturnClient['getPolicy']>>
export type PolicyFields = Omit<Parameters<KeyturnClient['createPolicy']>[0], 'productId'>

const secondsPerDay = 86_400

/**
 * What a policy's form says: empty "maximum activations" is unlimited, empty "duration" never
 * expires, empty "license files last" makes files that never expire, empty "longest token" keeps
 * the standard year, empty "check in" asks no check-in and empty "grace" leaves it to the
 * application; codes are comma- or space-separated.
 */
export function toPolicyFields(form: FormData): PolicyFields {
  const maxActivations = String(form.get('maxActivations') ?? '').trim()
  const days = String(form.get('durationDays') ?? '').trim()
  const metadata = parseJsonObject(form.get('metadata'), 'Metadata')
  const leaseMinutes = String(form.get('heartbeatMinutes') ?? '').trim()
  const maxUses = String(form.get('maxUses') ?? '').trim()
  const maxTransfers = String(form.get('maxTransfers') ?? '').trim()
  const transferDays = String(form.get('transferDays') ?? '').trim()
  const fileDays = String(form.get('licenseFileDays') ?? '').trim()
  const tokenDays = String(form.get('tokenMaxDays') ?? '').trim()
  const checkInDays = String(form.get('checkInDays') ?? '').trim()
  const graceDays = String(form.get('graceDays') ?? '').trim()
  return {
    checkInInterval: checkInDays === '' ? null : Math.round(Number(checkInDays) * secondsPerDay),
    gracePeriod: graceDays === '' ? null : Math.round(Number(graceDays) * secondsPerDay),
    licenseFileTtl: fileDays === '' ? null : Math.round(Number(fileDays) * secondsPerDay),
    tokenTtlMax: tokenDays === '' ? null : Math.round(Number(tokenDays) * secondsPerDay),
    licenseFileMetadata: form.get('licenseFileMetadata') === 'on',
    seatsPerQuantity: form.get('seatsPerQuantity') === 'on',
    maxTransfers: maxTransfers === '' ? null : Number(maxTransfers),
    ...(transferDays === '' ? {} : { transferPeriod: Math.round(Number(transferDays) * secondsPerDay) }),
    heartbeatTtl: leaseMinutes === '' ? null : Math.round(Number(leaseMinutes) * 60),
    maxUses: maxUses === '' ? null : Number(maxUses),
    name: String(form.get('name') ?? '').trim(),
    maxActivations: maxActivations === '' ? null : Number(maxActivations),
    duration: days === '' ? null : Math.round(Number(days) * secondsPerDay),
    expirationBasis: form.get('expirationBasis') === 'firstActivation' ? 'firstActivation' : 'creation',
    entitlements: parseCodes(form.get('entitlements')) as PolicyFields['entitlements'], // the API checks each code
    ...(metadata === undefined ? {} : { metadata }),
  }
}

/** A lifetime typed in days (fractions allowed), sent in seconds by toPolicyFields. */
function DaysField(props: {
  readonly name: string
  readonly label: string
  readonly min: number
  readonly max: number
  readonly defaultValue: number | ''
}) {
  return <NumberField step="any" {...props} />
}

function daysOrEmpty(seconds: number | null | undefined): number | '' {
  return seconds === null || seconds === undefined ? '' : Number((seconds / secondsPerDay).toFixed(4))
}

export function durationInDays(seconds: number | null): string {
  return seconds === null ? 'Never expires' : `${Number((seconds / secondsPerDay).toFixed(2))} days`
}

/** The fields a policy's create and edit forms share, filled from `policy` when editing. */
export function PolicyFieldset({ policy }: { policy?: PolicyResource }) {
  return (
    <>
      <TextInput label="Name" name="name" required maxLength={200} defaultValue={policy?.name} />
      <MaxActivationsField defaultValue={policy === undefined ? 1 : (policy.maxActivations ?? '')} />
      <NumberField
        label="Duration in days (empty: never expires)"
        name="durationDays"
        min={0.05}
        step="any"
        defaultValue={policy?.duration ? Number((policy.duration / secondsPerDay).toFixed(4)) : ''}
      />
      <NativeSelect
        label="Expiry counts from"
        name="expirationBasis"
        defaultValue={policy?.expirationBasis ?? 'creation'}
      >
        <option value="creation">the license's creation</option>
        <option value="firstActivation">its first activation</option>
      </NativeSelect>
      <LeaseMinutesField
        defaultValue={policy?.heartbeatTtl ? Number((policy.heartbeatTtl / 60).toFixed(2)) : ''}
      />
      <MaxUsesField defaultValue={policy?.maxUses ?? ''} />
      <NumberField
        label="Machines a customer may deactivate in the portal (empty: unlimited)"
        name="maxTransfers"
        min={0}
        step={1}
        defaultValue={policy === undefined ? 3 : (policy.maxTransfers ?? '')}
      />
      <NumberField
        label="Portal transfer window, days"
        name="transferDays"
        min={1}
        max={366}
        step={1}
        defaultValue={Math.round((policy?.transferPeriod ?? 30 * secondsPerDay) / secondsPerDay)}
      />
      <DaysField
        name="licenseFileDays"
        label="License files last, days (empty: they never expire)"
        min={1 / 24}
        max={36_500}
        defaultValue={policy === undefined ? 365 : daysOrEmpty(policy.licenseFileTtl)}
      />
      <DaysField
        name="tokenMaxDays"
        label="Longest token a request may ask for, days (empty: a year)"
        min={1 / 24}
        max={36_500}
        defaultValue={daysOrEmpty(policy?.tokenTtlMax)}
      />
      <DaysField
        name="checkInDays"
        label="Applications check in every, days (empty: no check-in)"
        min={1 / 1440}
        max={3650}
        defaultValue={daysOrEmpty(policy?.checkInInterval)}
      />
      <DaysField
        name="graceDays"
        label="Offline grace after a missed check-in, days (empty: the application decides)"
        min={0}
        max={3650}
        defaultValue={daysOrEmpty(policy?.gracePeriod)}
      />
      <Checkbox
        label="License files carry the license's metadata"
        name="licenseFileMetadata"
        defaultChecked={policy?.licenseFileMetadata ?? false}
      />
      <Checkbox
        label="A payment provider sale of quantity N gets N × the activations"
        name="seatsPerQuantity"
        defaultChecked={policy?.seatsPerQuantity ?? false}
      />
      <EntitlementsField defaultValue={policy?.entitlements.join(', ')} />
      <MetadataField defaultValue={policy?.metadata} />
    </>
  )
}
