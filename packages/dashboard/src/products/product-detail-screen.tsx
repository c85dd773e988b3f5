import type { ProductResource } from '@keyturn/client'
import { Button, Group, Textarea, TextInput } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { ConfirmButton } from '../components/confirm-button.js'
import { CopyButton } from '../components/copy-button.js'
import { DataTable } from '../components/data-table.js'
import { Fact, Facts } from '../components/facts.js'
import { FieldRow } from '../components/form-layout.js'
import { ProblemMessage } from '../components/problem-message.js'
import { StatusBadge } from '../components/status-badge.js'
import { Time } from '../components/time.js'
import { isAdmin, useSession } from '../session/session.js'

type ProductId = ProductResource['id']

const hours = (seconds: number) => Number((seconds / 3600).toFixed(2))

export function ProductDetailScreen() {
  const session = useSession()
  const id = (useParams().id ?? '') as ProductId // the route's :id; the API answers 404 for a bad one
  const product = useQuery({ queryKey: ['product', id], queryFn: () => session.client.getProduct(id) })
  return (
    <>
      <p>
        <Link to="/products">← Products</Link>
      </p>
      <ProblemMessage error={product.error} />
      {product.data && (
        <>
          <h1>{product.data.name}</h1>
          <Facts>
            <Fact term="Id">
              <code>{product.data.id}</code>
            </Fact>
            <Fact term="Status">
              <StatusBadge status={product.data.status} />
            </Fact>
            <Fact term="Created">
              <Time value={product.data.createdAt} />
            </Fact>
            <Fact term="Updated">
              <Time value={product.data.updatedAt} />
            </Fact>
            <Fact term="Client-key tokens">last at most {hours(product.data.clientTokenTtl)} hours</Fact>
            <Fact term="Licenses">
              <Link to={`/licenses?productId=${encodeURIComponent(product.data.id)}`}>
                Licenses of this product
              </Link>
            </Fact>
          </Facts>
          {isAdmin(session) && <ProductActions product={product.data} />}
          <PublicKeys product={product.data} />
        </>
      )}
    </>
  )
}

function ProductActions({ product }: { product: ProductResource }) {
  const { client } = useSession()
  const queryClient = useQueryClient()
  const done = () => queryClient.invalidateQueries()
  const edit = useMutation({
    mutationFn: (form: FormData) =>
      client.updateProduct(product.id, {
        name: String(form.get('name') ?? ''),
        clientTokenTtl: Math.round(Number(form.get('clientTokenHours')) * 3600),
      }),
    onSuccess: done,
  })
  const toggle = useMutation({
    mutationFn: () =>
      product.status === 'active' ? client.suspendProduct(product.id) : client.resumeProduct(product.id),
    onSuccess: done,
  })
  return (
    <section aria-labelledby="product-actions">
      <h2 id="product-actions">Change</h2>
      <form
        aria-label="Edit the product"
        key={product.updatedAt}
        onSubmit={(event) => {
          event.preventDefault()
          edit.mutate(new FormData(event.currentTarget))
        }}
      >
        <FieldRow>
          <TextInput label="Name" name="name" required maxLength={200} defaultValue={product.name} />
          <TextInput
            label="Longest client-key token (hours)"
            name="clientTokenHours"
            type="number"
            required
            min={0.01}
            step="any"
            defaultValue={hours(product.clientTokenTtl)}
          />
          <Button variant="default" type="submit" disabled={edit.isPending}>
            Save product
          </Button>
        </FieldRow>
        <ProblemMessage error={edit.error} />
      </form>
      <Group mt="md">
        {product.status === 'active' ? (
          <ConfirmButton
            label="Suspend product"
            title="Suspend this product?"
            confirmLabel="Suspend"
            danger
            onConfirm={() => toggle.mutate()}
          >
            <p>
              Every license of <strong>{product.name}</strong> stops validating (reason <code>suspended</code>
              ) and no token is issued until you resume it.
            </p>
          </ConfirmButton>
        ) : (
          <ConfirmButton
            label="Resume product"
            title="Resume this product?"
            confirmLabel="Resume"
            onConfirm={() => toggle.mutate()}
          >
            <p>Its licenses validate again as their own status says.</p>
          </ConfirmButton>
        )}
      </Group>
      <ProblemMessage error={toggle.error} />
    </section>
  )
}

function PublicKeys({ product }: { product: ProductResource }) {
  const session = useSession()
  const queryClient = useQueryClient()
  const keys = useQuery({
    queryKey: ['product-keys', product.id],
    queryFn: () => session.client.listProductKeys(product.id, { limit: 10 }),
  })
  const rotate = useMutation({
    mutationFn: () => session.client.rotateProductKey(product.id),
    onSuccess: () => queryClient.invalidateQueries(),
  })
  const jwk = JSON.stringify(product.publicKeyJwk, null, 2)
  return (
    <section aria-labelledby="public-key">
      <h2 id="public-key">Public key</h2>
      <p>
        Applications verify license tokens offline with this key. Current key id <code>{product.keyId}</code>.
      </p>
      <Textarea
        label="Public key (PEM)"
        readOnly
        rows={4} // three lines of PEM, one of which wraps at phone width
        value={product.publicKey}
        spellCheck={false}
        className="monospace"
        mb="xs"
      />
      <Group gap="xs">
        <CopyButton value={product.publicKey} label="Copy PEM" />
        <CopyButton value={jwk} label="Copy JWK" />
      </Group>
      {isAdmin(session) && (
        <Group mt="md">
          <ConfirmButton
            label="Rotate signing key"
            title="Rotate the signing key?"
            confirmLabel="Rotate key"
            danger
            onConfirm={() => rotate.mutate()}
          >
            <p>
              New tokens are signed with a new key. Tokens already issued keep verifying with the old public
              key (listed below) until they expire; applications need the new public key for new tokens.
            </p>
          </ConfirmButton>
        </Group>
      )}
      <ProblemMessage error={rotate.error} />
      <ProblemMessage error={keys.error} />
      {keys.data && (
        <DataTable label={`Signing keys (${keys.data.totalCount})`}>
          <thead>
            <tr>
              <th scope="col">Key id</th>
              <th scope="col">Current</th>
              <th scope="col">Created</th>
              <th scope="col">Retired</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.data.map((key) => (
              <tr key={key.keyId}>
                <td>
                  <code>{key.keyId}</code>
                </td>
                <td>{key.isCurrent ? 'Yes' : 'No'}</td>
                <td>
                  <Time value={key.createdAt} />
                </td>
                <td>
                  <Time value={key.retiredAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </DataTable>
      )}
    </section>
  )
}
