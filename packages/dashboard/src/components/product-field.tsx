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
 * A required "Product" field named `productId`: a select over one page of products, or a text field
 * for the id when there are more.
 */
export function ProductField({ id, label = 'Product' }: { id: string; label?: string }) {
  const products = useProductChoices()
  return (
    <>
      <label htmlFor={id}>{label}</label>
      {products.data ? (
        <select id={id} name="productId" required>
          {products.data.data.map((product) => (
            <option key={product.id} value={product.id}>
              {product.name}
            </option>
          ))}
        </select>
      ) : (
        <input id={id} name="productId" required placeholder="prd_…" />
      )}
    </>
  )
}
