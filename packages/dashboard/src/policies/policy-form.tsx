import type { KeyturnClient } from '@keyturn/client'
import { useId } from 'react'
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
  readonly id: string
  readonly name: string
  readonly label: string
  readonly min: number
  readonly max: number
  readonly defaultValue: number | ''
}) {
  return (
    <>
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        name={props.name}
        type="number"
        min={props.min}
        max={props.max}
        step="any"
        defaultValue={props.defaultValue}
      />
    </>
  )
}

function daysOrEmpty(seconds: number | null | undefined): number | '' {
  return seconds === null || seconds === undefined ? '' : Number((seconds / secondsPerDay).toFixed(4))
}

export function durationInDays(seconds: number | null): string {
  return seconds === null ? 'Never expires' : `${Number((seconds / secondsPerDay).toFixed(2))} days`
}

/** The fields a policy's create and edit forms share, filled from `policy` when editing. */
export function PolicyFieldset({ policy }: { policy?: PolicyResource }) {
  const id = useId()
  return (
    <>
      <label htmlFor={`${id}-name`}>Name</label>
      <input id={`${id}-name`} name="name" required maxLength={200} defaultValue={policy?.name} />
      <label htmlFor={`${id}-max`}>Maximum activations (empty: unlimited)</label>
      <input
        id={`${id}-max`}
        name="maxActivations"
        type="number"
        min={1}
        step={1}
        defaultValue={policy === undefined ? 1 : (policy.maxActivations ?? '')}
      />
      <label htmlFor={`${id}-duration`}>Duration in days (empty: never expires)</label>
      <input
        id={`${id}-duration`}
        name="durationDays"
        type="number"
        min={0.05}
        step="any"
        defaultValue={policy?.duration ? Number((policy.duration / secondsPerDay).toFixed(4)) : ''}
      />
      <label htmlFor={`${id}-basis`}>Expiry counts from</label>
      <select id={`${id}-basis`} name="expirationBasis" defaultValue={policy?.expirationBasis ?? 'creation'}>
        <option value="creation">the license's creation</option>
        <option value="firstActivation">its first activation</option>
      </select>
      <label htmlFor={`${id}-lease`}>Floating seat lease, minutes (empty: none)</label>
      <input
        id={`${id}-lease`}
        name="heartbeatMinutes"
        type="number"
        min={1}
        step="any"
        defaultValue={policy?.heartbeatTtl ? Number((policy.heartbeatTtl / 60).toFixed(2)) : ''}
      />
      <label htmlFor={`${id}-uses`}>Maximum uses (empty: unmetered)</label>
      <input
        id={`${id}-uses`}
        name="maxUses"
        type="number"
        min={1}
        step={1}
        defaultValue={policy?.maxUses ?? ''}
      />
      <label htmlFor={`${id}-transfers`}>
        Machines a customer may deactivate in the portal (empty: unlimited)
      </label>
      <input
        id={`${id}-transfers`}
        name="maxTransfers"
        type="number"
        min={0}
        step={1}
        defaultValue={policy === undefined ? 3 : (policy.maxTransfers ?? '')}
      />
      <label htmlFor={`${id}-transfer-days`}>Portal transfer window, days</label>
      <input
        id={`${id}-transfer-days`}
        name="transferDays"
        type="number"
        min={1}
        max={366}
        step={1}
        defaultValue={Math.round((policy?.transferPeriod ?? 30 * secondsPerDay) / secondsPerDay)}
      />
      <DaysField
        id={`${id}-file-days`}
        name="licenseFileDays"
        label="License files last, days (empty: they never expire)"
        min={1 / 24}
        max={36_500}
        defaultValue={policy === undefined ? 365 : daysOrEmpty(policy.licenseFileTtl)}
      />
      <DaysField
        id={`${id}-token-days`}
        name="tokenMaxDays"
        label="Longest token a request may ask for, days (empty: a year)"
        min={1 / 24}
        max={36_500}
        defaultValue={daysOrEmpty(policy?.tokenTtlMax)}
      />
      <DaysField
        id={`${id}-check-in`}
        name="checkInDays"
        label="Applications check in every, days (empty: no check-in)"
        min={1 / 1440}
        max={3650}
        defaultValue={daysOrEmpty(policy?.checkInInterval)}
      />
      <DaysField
        id={`${id}-grace`}
        name="graceDays"
        label="Offline grace after a missed check-in, days (empty: the application decides)"
        min={0}
        max={3650}
        defaultValue={daysOrEmpty(policy?.gracePeriod)}
      />
      <div className="checkbox">
        <input
          id={`${id}-file-metadata`}
          name="licenseFileMetadata"
          type="checkbox"
          defaultChecked={policy?.licenseFileMetadata ?? false}
        />
        <label htmlFor={`${id}-file-metadata`}>License files carry the license&apos;s metadata</label>
      </div>
      <div className="checkbox">
        <input
          id={`${id}-seats`}
          name="seatsPerQuantity"
          type="checkbox"
          defaultChecked={policy?.seatsPerQuantity ?? false}
        />
        <label htmlFor={`${id}-seats`}>A payment provider sale of quantity N gets N × the activations</label>
      </div>
      <label htmlFor={`${id}-codes`}>Entitlements (codes, comma-separated)</label>
      <input id={`${id}-codes`} name="entitlements" defaultValue={policy?.entitlements.join(', ')} />
      <MetadataField defaultValue={policy?.metadata} />
    </>
  )
}
