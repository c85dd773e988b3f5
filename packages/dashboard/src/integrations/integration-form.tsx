import type { KeyturnClient } from '@keyturn/client'
import { Button, Fieldset, NativeSelect, TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { FieldRow, FieldStack, FormButtons } from '../components/form-layout.js'
import { useProductNames } from '../components/product-field.js'
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
  const policies = usePolicyChoices()
  const productNames = useProductNames()
  const [rows, setRows] = useState(() =>
    (integration?.mappings.length ? integration.mappings : [undefined]).map((mapping) => ({
      key: nextRow++,
      mapping,
    })),
  )
  return (
    <>
      <TextInput
        label="Description (optional)"
        name="description"
        maxLength={500}
        placeholder={`${providerNames[provider]} live mode`}
        defaultValue={integration?.description ?? ''}
      />
      <NativeSelect
        label="A refund or chargeback"
        name="onRefund"
        defaultValue={integration?.onRefund ?? 'revoke'}
      >
        <option value="revoke">revokes the license</option>
        <option value="none">leaves the license as it is</option>
      </NativeSelect>
      <TextInput
        label="Days a license keeps working after a failed payment"
        name="paymentGraceDays"
        type="number"
        min={0}
        max={90}
        step={1}
        required
        defaultValue={integration?.paymentGraceDays ?? 7}
      />
      <Fieldset legend={`What each ${providerNames[provider]} item sells`}>
        <FieldStack>
          {rows.map(({ key, mapping }, index) => (
            <FieldRow key={key}>
              <TextInput
                label={`${itemNames[provider]}${rows.length > 1 ? ` ${index + 1}` : ''}`}
                name="mappingItem"
                maxLength={200}
                defaultValue={mapping?.providerItemId ?? ''}
              />
              {policies.data === undefined ? (
                <TextInput
                  label="Sells (product — policy)"
                  name="mappingPolicy"
                  placeholder="prd_… pol_…"
                  defaultValue={mapping === undefined ? '' : `${mapping.productId} ${mapping.policyId}`}
                />
              ) : (
                <NativeSelect
                  label="Sells (product — policy)"
                  name="mappingPolicy"
                  defaultValue={mapping === undefined ? '' : `${mapping.productId} ${mapping.policyId}`}
                >
                  <option value="">Choose a policy</option>
                  {policies.data.data.map((policy) => (
                    <option key={policy.id} value={`${policy.productId} ${policy.id}`}>
                      {productNames.get(policy.productId) ?? policy.productId} — {policy.name}
                    </option>
                  ))}
                </NativeSelect>
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
            </FieldRow>
          ))}
          <FormButtons>
            <Button
              variant="default"
              type="button"
              onClick={() => setRows((current) => [...current, { key: nextRow++, mapping: undefined }])}
            >
              Add a mapping
            </Button>
          </FormButtons>
        </FieldStack>
      </Fieldset>
    </>
  )
}
