import type { KeyturnClient } from '@keyturn/client'
import { Button } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useProductChoices } from '../components/product-choices.js'
import { useSession } from '../session/session.js'

type IntegrationResource = Awaited<ReturnType<KeyturnClient['getIntegration']>>
type CreateIntegrationBody = Parameters<KeyturnClient['createIntegration']>[0]
export type IntegrationFields = Omit<CreateIntegrationBody, 'provider' | 'signingSecret'> & {
  signingSecret?: string
}
type Mapping = NonNullable<CreateIntegrationBody['mappings']>[number]

export const providerNames = { stripe: 'Stripe', paddle: 'Paddle', lemonsqueezy: 'Lemon Squeezy' } as const

/** What the provider calls the item a mapping names. */
export const itemNames = {
  stripe: 'Stripe price id (price_…)',
  paddle: 'Paddle price id (pri_…)',
  lemonsqueezy: 'Lemon Squeezy variant id',
} as const

/**
 * The form's fields as a request body: an empty signing secret is left out (an edit keeps the
 * stored one), a mapping row without an item id is left out, and a row's policy names its product.
 */
export function toIntegrationFields(form: FormData): IntegrationFields {
  const description = String(form.get('description') ?? '').trim()
  const secret = String(form.get('signingSecret') ?? '')
  const items = form.getAll('mappingItem').map((value) => String(value).trim())
  const policies = form.getAll('mappingPolicy').map(String)
  const mappings: Mapping[] = []
  items.forEach((providerItemId, index) => {
    const [productId, policyId] = (policies[index] ?? '').split(' ')
    if (providerItemId !== '') {
      // The API checks each id and answers which one it does not know.
      mappings.push({ providerItemId, productId, policyId } as Mapping)
    }
  })
  return {
    ...(secret === '' ? {} : { signingSecret: secret }),
    description: description === '' ? undefined : description,
    onRefund: form.get('onRefund') === 'none' ? 'none' : 'revoke',
    paymentGraceDays: Number(form.get('paymentGraceDays') ?? 7),
    mappings,
  }
}

/**
 * The policies to sell, as "product — policy" choices: one page of 100 (the API's largest). With
 * more, `data` is undefined and a row asks for the ids instead.
 */
function usePolicyChoices() {
  const { client } = useSession()
  return useQuery({
    queryKey: ['policies', 'choices'],
    queryFn: () => client.listPolicies({ limit: 100, sort: 'name:asc' }),
    select: (page) => (page.hasNextPage ? undefined : page),
  })
}

let nextRow = 0

/** Description, refunds, payment grace and the mappings (rows added and removed in place). */
export function IntegrationFieldset({
  integration,
  provider,
}: {
  integration?: IntegrationResource
  provider: keyof typeof providerNames
}) {
  const id = useId()
  const policies = usePolicyChoices()
  const products = useProductChoices()
  const productNames = new Map((products.data?.data ?? []).map((product) => [product.id, product.name]))
  const [rows, setRows] = useState(() =>
    (integration?.mappings.length ? integration.mappings : [undefined]).map((mapping) => ({
      key: nextRow++,
      mapping,
    })),
  )
  return (
    <>
      <label htmlFor={`${id}-description`}>Description (optional)</label>
      <input
        id={`${id}-description`}
        name="description"
        maxLength={500}
        placeholder={`${providerNames[provider]} live mode`}
        defaultValue={integration?.description ?? ''}
      />
      <label htmlFor={`${id}-refund`}>A refund or chargeback</label>
      <select id={`${id}-refund`} name="onRefund" defaultValue={integration?.onRefund ?? 'revoke'}>
        <option value="revoke">revokes the license</option>
        <option value="none">leaves the license as it is</option>
      </select>
      <label htmlFor={`${id}-grace`}>Days a license keeps working after a failed payment</label>
      <input
        id={`${id}-grace`}
        name="paymentGraceDays"
        type="number"
        min={0}
        max={90}
        step={1}
        required
        defaultValue={integration?.paymentGraceDays ?? 7}
      />
      <fieldset className="mappings">
        <legend>What each {providerNames[provider]} item sells</legend>
        {rows.map(({ key, mapping }, index) => (
          <div className="mapping" key={key}>
            <label htmlFor={`${id}-item-${key}`}>
              {itemNames[provider]} {rows.length > 1 ? index + 1 : ''}
            </label>
            <input
              id={`${id}-item-${key}`}
              name="mappingItem"
              maxLength={200}
              defaultValue={mapping?.providerItemId ?? ''}
            />
            <label htmlFor={`${id}-policy-${key}`}>Sells (product — policy)</label>
            {policies.data === undefined ? (
              <input
                id={`${id}-policy-${key}`}
                name="mappingPolicy"
                placeholder="prd_… pol_…"
                defaultValue={mapping === undefined ? '' : `${mapping.productId} ${mapping.policyId}`}
              />
            ) : (
              <select
                id={`${id}-policy-${key}`}
                name="mappingPolicy"
                defaultValue={mapping === undefined ? '' : `${mapping.productId} ${mapping.policyId}`}
              >
                <option value="">Choose a policy</option>
                {policies.data.data.map((policy) => (
                  <option key={policy.id} value={`${policy.productId} ${policy.id}`}>
                    {productNames.get(policy.productId) ?? policy.productId} — {policy.name}
                  </option>
                ))}
              </select>
            )}
            {rows.length > 1 && (
              <Button
                variant="default"
                type="button"
                onClick={() => setRows((current) => current.filter((row) => row.key !== key))}
              >
                Remove mapping {index + 1}
              </Button>
            )}
          </div>
        ))}
        <Button
          variant="default"
          type="button"
          onClick={() => setRows((current) => [...current, { key: nextRow++, mapping: undefined }])}
        >
          Add a mapping
        </Button>
      </fieldset>
    </>
  )
}
