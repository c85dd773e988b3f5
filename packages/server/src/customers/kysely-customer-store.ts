import type { CustomerId } from '@keyturn/protocol'
import { type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import { isForeignKeyViolation, isUniqueViolation } from '../storage/constraint-violations.js'
import type { CustomersTable, Database } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import { readMetadata } from '../storage/json.js'
import {
  column,
  compareColumn,
  foldedText,
  isStorableText,
  type ListTable,
  selectPage,
} from '../storage/list-sql.js'
import type { Customer } from './customer.js'
import type {
  CustomerChanges,
  CustomerFilterField,
  CustomerScope,
  CustomerSortField,
  CustomerStore,
  CustomerWrite,
} from './customer-store.js'

type CustomerRow = Selectable<CustomersTable>

function rowToCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    metadata: readMetadata(row.metadata),
    mailOptOut: Number(row.mail_opt_out) === 1,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

const customerTable: ListTable<CustomerSortField, CustomerFilterField> = {
  table: 'customers',
  sort: {
    createdAt: column('created_at'),
    email: column('email_lower'),
    // Case-insensitive, alike on both engines; no name sorts first.
    name: foldedText('name', ''),
  },
  filters: {
    // Emails compare case-insensitively, as they are unique.
    email: {
      translate: (rule) =>
        compareColumn(
          sql.ref('customers.email_lower'),
          'value' in rule && typeof rule.value === 'string'
            ? { ...rule, value: rule.value.toLowerCase() }
            : 'values' in rule
              ? { ...rule, values: rule.values.map((value) => String(value).toLowerCase()) }
              : rule,
        ),
    },
    createdAt: { column: 'created_at' },
  },
}

/** A product key sees the customers owning at least one license of its product. */
function scopeCondition(scope: CustomerScope): RawBuilder<SqlBool>[] {
  return scope === undefined
    ? []
    : [
        sql<SqlBool>`exists (select 1 from licenses where licenses.customer_id = customers.id and licenses.product_id = ${scope.productId})`,
      ]
}

export class KyselyCustomerStore implements CustomerStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(customer: Customer): Promise<CustomerWrite> {
    const row = await this.#db
      .insertInto('customers')
      .values({
        id: customer.id,
        email: customer.email,
        email_lower: customer.email.toLowerCase(),
        name: customer.name,
        metadata: JSON.stringify(customer.metadata),
        mail_opt_out: customer.mailOptOut ? 1 : 0,
        created_at: customer.createdAt.toISOString(),
        updated_at: customer.updatedAt.toISOString(),
      })
      .onConflict((conflict) => conflict.column('email_lower').doNothing())
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? { kind: 'email_taken' } : { kind: 'ok', customer: rowToCustomer(row) }
  }

  async findByEmail(email: string): Promise<Customer | undefined> {
    if (!isStorableText(email)) {
      return undefined
    }
    const row = await this.#db
      .selectFrom('customers')
      .selectAll()
      .where('email_lower', '=', email.toLowerCase())
      .executeTakeFirst()
    return row === undefined ? undefined : rowToCustomer(row)
  }

  async findIdsByEmails(emails: readonly string[]): Promise<ReadonlyMap<string, CustomerId>> {
    const found = new Map<string, CustomerId>()
    const lower = [...new Set(emails.filter(isStorableText).map((email) => email.toLowerCase()))]
    for (let start = 0; start < lower.length; start += 500) {
      const rows = await this.#db
        .selectFrom('customers')
        .select(['id', 'email_lower'])
        .where('email_lower', 'in', lower.slice(start, start + 500))
        .execute()
      for (const row of rows) {
        found.set(row.email_lower, row.id)
      }
    }
    return found
  }

  async findById(id: CustomerId, scope: CustomerScope): Promise<Customer | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const { rows } = await sql<CustomerRow>`select * from customers where ${sql.join(
      [sql<SqlBool>`customers.id = ${id}`, ...scopeCondition(scope)],
      sql` and `,
    )}`.execute(this.#db)
    const [row] = rows
    return row === undefined ? undefined : rowToCustomer(row)
  }

  async update(id: CustomerId, changes: CustomerChanges): Promise<CustomerWrite | undefined> {
    try {
      const row = await this.#db
        .updateTable('customers')
        .set({
          updated_at: changes.updatedAt.toISOString(),
          ...(changes.email === undefined
            ? {}
            : { email: changes.email, email_lower: changes.email.toLowerCase() }),
          ...(changes.name === undefined ? {} : { name: changes.name }),
          ...(changes.metadata === undefined ? {} : { metadata: JSON.stringify(changes.metadata) }),
          ...(changes.mailOptOut === undefined ? {} : { mail_opt_out: changes.mailOptOut ? 1 : 0 }),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
      return row === undefined ? undefined : { kind: 'ok', customer: rowToCustomer(row) }
    } catch (error) {
      if (isUniqueViolation(error)) {
        return { kind: 'email_taken' }
      }
      throw error
    }
  }

  async delete(id: CustomerId): Promise<'deleted' | 'has_licenses' | undefined> {
    try {
      const deleted = await this.#db.deleteFrom('customers').where('id', '=', id).executeTakeFirst()
      return deleted.numDeletedRows > 0n ? 'deleted' : undefined
    } catch (error) {
      // licenses.customer_id references the customer: the database refuses, even against a
      // license attached concurrently.
      if (isForeignKeyViolation(error)) {
        return 'has_licenses'
      }
      throw error
    }
  }

  async list(
    request: ListRequest<CustomerSortField, CustomerFilterField>,
    scope: CustomerScope,
  ): Promise<ListSlice<Customer>> {
    const slice = await selectPage<CustomerRow, CustomerSortField, CustomerFilterField>(
      this.#db,
      customerTable,
      request,
      scopeCondition(scope),
    )
    return { ...slice, items: slice.items.map(rowToCustomer) }
  }
}
