import { NativeSelect, TextInput } from '@mantine/core'
import { Link } from 'react-router'
import { useProductChoices } from './product-choices.js'

/** Product names by id, from the one page of choices (an id missing here is shown as the id). */
export function useProductNames(): Map<string, string> {
  const products = useProductChoices()
  return new Map((products.data?.data ?? []).map((product) => [product.id, product.name]))
}

/** A link to a product's page, by its name when the choices know it. */
export function ProductLink({ id }: { id: string }) {
  const names = useProductNames()
  return <Link to={`/products/${id}`}>{names.get(id) ?? id}</Link>
}

/**
 * A "Product" field named `productId`: a select over one page of products, or a text field for the
 * id when there are more. Required, unless `any` names the choice of no product (a filter's "Any").
 */
export function ProductField({
  id,
  label = 'Product',
  any,
  defaultValue,
}: {
  readonly id?: string
  readonly label?: string
  readonly any?: string
  readonly defaultValue?: string
}) {
  const products = useProductChoices()
  const required = any === undefined
  if (products.data === undefined) {
    return (
      <TextInput
        id={id}
        label={label}
        name="productId"
        required={required}
        defaultValue={defaultValue}
        placeholder="prd_…"
      />
    )
  }
  return (
    <NativeSelect id={id} label={label} name="productId" required={required} defaultValue={defaultValue}>
      {any !== undefined && <option value="">{any}</option>}
      {products.data.data.map((product) => (
        <option key={product.id} value={product.id}>
          {product.name}
        </option>
      ))}
    </NativeSelect>
  )
}
