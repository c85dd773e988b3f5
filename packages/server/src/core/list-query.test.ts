import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DomainError, InvalidInputError } from './errors.js'
import { type FieldKinds, pageOf, parseFilter, parseListQuery, parseSort, toPage } from './list-query.js'

const sortFields = ['createdAt', 'key'] as const
type Field = 'status' | 'productId' | 'expirationDate' | 'createdAt' | 'maxActivations'
const fields: FieldKinds<Field> = {
  status: { type: 'enum', values: ['active', 'revoked', 'expired'] },
  productId: { type: 'string' },
  expirationDate: { type: 'timestamp', nullable: true },
  createdAt: { type: 'timestamp' },
  maxActivations: { type: 'integer', nullable: true },
}

/** Asserts that parsing `text` fails with invalid_filter and a detail matching `why`. */
function assertInvalidFilter(text: string, why: RegExp): void {
  assert.throws(
    () => parseFilter(text, fields),
    (error: unknown) => {
      assert.ok(error instanceof DomainError, String(error))
      assert.equal(error.code, 'invalid_filter')
      assert.match(error.message, why, text)
      return true
    },
    text,
  )
}

describe('parseSort', () => {
  it('reads field:order for each allowed field and order', () => {
    assert.deepEqual(parseSort('createdAt:asc', sortFields), { field: 'createdAt', order: 'asc' })
    assert.deepEqual(parseSort('key:desc', sortFields), { field: 'key', order: 'desc' })
  })

  it('reads a bare field as ascending', () => {
    assert.deepEqual(parseSort('key', sortFields), { field: 'key', order: 'asc' })
  })

  it('throws validation_failed at #/sort for anything else', () => {
    for (const text of [
      '',
      ':asc',
      'updatedAt:asc',
      'KEY:asc',
      'key:ASC',
      'key:',
      'key:up',
      'key:asc:extra',
      'key:asc,createdAt:desc',
      'constructor:asc',
      'toString',
    ]) {
      assert.throws(
        () => parseSort(text, sortFields),
        (error: unknown) => {
          assert.ok(error instanceof InvalidInputError, text)
          assert.equal(error.code, 'validation_failed')
          assert.deepEqual(
            error.fieldErrors?.map((fieldError) => fieldError.pointer),
            ['#/sort'],
          )
          assert.match(error.message, /createdAt, key/)
          return true
        },
        text,
      )
    }
  })
})

describe('parseFilter', () => {
  it('reads one rule per comma, each field:operator:value', () => {
    assert.deepEqual(parseFilter('status:eq:active,maxActivations:gte:3', fields), [
      { field: 'status', operator: 'eq', value: 'active' },
      { field: 'maxActivations', operator: 'gte', value: 3 },
    ])
  })

  it('reads every comparison operator', () => {
    for (const operator of ['eq', 'ne', 'lt', 'lte', 'gt', 'gte'] as const) {
      assert.deepEqual(parseFilter(`maxActivations:${operator}:-7`, fields), [
        { field: 'maxActivations', operator, value: -7 },
      ])
    }
  })

  it('reads in with values separated by |', () => {
    assert.deepEqual(parseFilter('status:in:active|expired', fields), [
      { field: 'status', operator: 'in', values: ['active', 'expired'] },
    ])
    assert.deepEqual(parseFilter('maxActivations:in:1|5|100', fields), [
      { field: 'maxActivations', operator: 'in', values: [1, 5, 100] },
    ])
    assert.deepEqual(parseFilter('productId:in:prd_a', fields), [
      { field: 'productId', operator: 'in', values: ['prd_a'] },
    ])
  })

  it('reads null and notnull without a value on nullable fields', () => {
    assert.deepEqual(parseFilter('expirationDate:null,maxActivations:notnull', fields), [
      { field: 'expirationDate', operator: 'null' },
      { field: 'maxActivations', operator: 'notnull' },
    ])
  })

  it('normalises timestamps to UTC ISO strings with milliseconds, keeping the colons of the value', () => {
    assert.deepEqual(
      parseFilter(
        'createdAt:gt:2030-01-01T01:30:00+01:30,createdAt:lt:2030-02-01,expirationDate:in:2030-03-01T00:00Z|2030-03-02T00:00:00.123456Z',
        fields,
      ),
      [
        { field: 'createdAt', operator: 'gt', value: '2030-01-01T00:00:00.000Z' },
        { field: 'createdAt', operator: 'lt', value: '2030-02-01T00:00:00.000Z' },
        {
          field: 'expirationDate',
          operator: 'in',
          values: ['2030-03-01T00:00:00.000Z', '2030-03-02T00:00:00.123Z'],
        },
      ],
    )
  })

  it('keeps string values as given, colons included', () => {
    assert.deepEqual(parseFilter("productId:eq:x' OR 1=1 --:", fields), [
      { field: 'productId', operator: 'eq', value: "x' OR 1=1 --:" },
    ])
  })

  it('accepts the last day of each month, leap days included', () => {
    for (const date of ['2030-01-31', '2030-02-28', '2032-02-29', '2000-02-29', '2030-04-30', '2030-12-31']) {
      assert.deepEqual(parseFilter(`createdAt:eq:${date}`, fields), [
        { field: 'createdAt', operator: 'eq', value: `${date}T00:00:00.000Z` },
      ])
    }
  })

  it('accepts the 32-bit integer bounds and the years 0001 and 9999', () => {
    assert.deepEqual(parseFilter('maxActivations:gt:-2147483648,maxActivations:lt:2147483647', fields), [
      { field: 'maxActivations', operator: 'gt', value: -2_147_483_648 },
      { field: 'maxActivations', operator: 'lt', value: 2_147_483_647 },
    ])
    assert.deepEqual(parseFilter('createdAt:gt:0001-01-01,createdAt:lt:9999-12-31T23:59:59.999Z', fields), [
      { field: 'createdAt', operator: 'gt', value: '0001-01-01T00:00:00.000Z' },
      { field: 'createdAt', operator: 'lt', value: '9999-12-31T23:59:59.999Z' },
    ])
  })

  it('throws invalid_filter naming the rule for an unknown field', () => {
    for (const text of ['key:eq:x', 'Status:eq:active', 'constructor:eq:x', '__proto__:eq:x', '', ':eq:x']) {
      assertInvalidFilter(text, new RegExp(`^Filter rule "${escapeRegExp(text)}": unknown field`))
    }
    assertInvalidFilter('status:eq:active,', /^Filter rule "": unknown field ""/)
  })

  it('throws invalid_filter naming the rule for an unknown operator', () => {
    for (const [text, operator] of [
      ['status', ''],
      ['status:', ''],
      ['status:is:active', 'is'],
      ['status:EQ:active', 'EQ'],
      ['maxActivations:like:1', 'like'],
    ]) {
      assertInvalidFilter(text ?? '', new RegExp(`^Filter rule "${text}": unknown operator "${operator}"`))
    }
  })

  it('throws invalid_filter for an operator that does not apply to the field', () => {
    for (const text of [
      'status:lt:active',
      'status:gte:active',
      'status:null',
      'createdAt:null',
      'createdAt:notnull',
      'productId:null',
    ]) {
      assertInvalidFilter(
        text,
        new RegExp(`^Filter rule "${text}": operator "\\w+" does not apply to \\w+; use one of`),
      )
    }
  })

  it('throws invalid_filter for a missing value, or a value after null or notnull', () => {
    for (const text of ['status:eq', 'status:eq:', 'status:in:', 'maxActivations:gt:']) {
      assertInvalidFilter(text, /needs a value/)
    }
    for (const text of ['expirationDate:null:', 'expirationDate:notnull:x']) {
      assertInvalidFilter(text, /takes no value/)
    }
  })

  it('throws invalid_filter for a value the field cannot hold', () => {
    for (const [text, why] of [
      ['status:eq:pending', /"pending" is not one of active, revoked, expired/],
      ['status:in:active|nope', /"nope" is not one of/],
      ['status:in:active|', /"" is not one of/],
      ['createdAt:gt:yesterday', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2030-02-30', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2030-02-29T00:00:00Z', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2100-02-29', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2030-04-31', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2030-01-32', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2030-01-01T25:00Z', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2030-01-01T00:00:00', /not an ISO 8601 timestamp/],
      ['createdAt:gt:2030-01-01 00:00:00Z', /not an ISO 8601 timestamp/],
      ['createdAt:gt:0000-01-01', /outside the years 0001 to 9999/],
      ['createdAt:gt:0001-01-01T00:00:00+01:00', /outside the years 0001 to 9999/],
      ['createdAt:gt:9999-12-31T23:00:00-01:00', /outside the years 0001 to 9999/],
      ['maxActivations:eq:one', /not an integer/],
      ['maxActivations:eq:1.0', /not an integer/],
      ['maxActivations:eq:+1', /not an integer/],
      ['maxActivations:eq:12345678901', /not an integer/],
      ['maxActivations:eq:2147483648', /not an integer from -2147483648 to 2147483647/],
      ['maxActivations:eq:-2147483649', /not an integer from/],
      ['productId:eq:a\u0000b', /NUL character/],
      [`productId:eq:${'x'.repeat(257)}`, /longer than 256 characters/],
    ] as const) {
      assertInvalidFilter(text, why)
    }
  })

  it('throws invalid_filter for more than 20 rules or 50 values', () => {
    const rules = (count: number) => Array.from({ length: count }, () => 'status:eq:active').join(',')
    const values = (count: number) => `status:in:${Array.from({ length: count }, () => 'active').join('|')}`

    assert.equal(parseFilter(rules(20), fields).length, 20)
    assertInvalidFilter(rules(21), /at most 20 rules/)
    assert.equal(parseFilter(values(50), fields).length, 1)
    assertInvalidFilter(values(51), /at most 50 values/)
  })
})

describe('toPage', () => {
  const slice = (totalCount: number, offset: number, length: number) => ({
    items: Array.from({ length }, (_, i) => offset + i),
    totalCount,
    offset,
  })

  it('describes an empty list as page 0 of 0 pages', () => {
    assert.deepEqual(toPage(slice(0, 0, 0), 30, 0), {
      data: [],
      totalCount: 0,
      page: 0,
      limit: 30,
      totalPages: 0,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    })
  })

  it('counts pages: ceil(totalCount / limit)', () => {
    for (const [total, limit, pages] of [
      [1, 1, 1],
      [5, 10, 1],
      [10, 10, 1],
      [11, 10, 2],
      [100, 100, 1],
      [101, 100, 2],
      [7, 3, 3],
    ]) {
      assert.equal(toPage(slice(total ?? 0, 0, 0), limit ?? 1, 0).totalPages, pages, `${total}/${limit}`)
    }
  })

  it('links a first, middle and last page to their neighbours', () => {
    const links = (page: number) => {
      const { hasPrevPage, hasNextPage, prevPage, nextPage } = toPage(slice(7, page * 3, 3), 3, page)
      return { hasPrevPage, hasNextPage, prevPage, nextPage }
    }
    assert.deepEqual(links(0), { hasPrevPage: false, hasNextPage: true, prevPage: null, nextPage: 1 })
    assert.deepEqual(links(1), { hasPrevPage: true, hasNextPage: true, prevPage: 0, nextPage: 2 })
    assert.deepEqual(links(2), { hasPrevPage: true, hasNextPage: false, prevPage: 1, nextPage: null })
  })

  it('has no next page after a last page that is exactly full', () => {
    const page = toPage(slice(6, 3, 3), 3, 1)
    assert.deepEqual([page.hasNextPage, page.nextPage], [false, null])
  })

  it('points prevPage at the last real page from past the end', () => {
    for (const number of [3, 4, 50]) {
      const page = toPage(slice(7, number * 3, 0), 3, number)
      assert.deepEqual(
        [page.hasPrevPage, page.prevPage, page.hasNextPage, page.nextPage, page.totalPages],
        [true, 2, false, null, 3],
        `page ${number}`,
      )
    }
  })

  it('reports a next page from a keyset slice that does not start on a page boundary', () => {
    const page = toPage(slice(9, 5, 3), 3, pageOf({ page: undefined, limit: 3 }, 5))
    assert.deepEqual(
      [page.page, page.hasPrevPage, page.prevPage, page.hasNextPage, page.nextPage],
      [1, true, 0, true, 2],
    )
  })
})

describe('pageOf', () => {
  it('keeps the requested page in page mode', () => {
    assert.equal(pageOf({ page: 4, limit: 10 }, 40), 4)
    assert.equal(pageOf({ page: 0, limit: 10 }, 0), 0)
  })

  it('derives floor(offset / limit) in keyset mode', () => {
    for (const [offset, limit, page] of [
      [0, 3, 0],
      [2, 3, 0],
      [3, 3, 1],
      [5, 3, 1],
      [9, 3, 3],
      [99, 100, 0],
    ]) {
      assert.equal(pageOf({ page: undefined, limit: limit ?? 1 }, offset ?? 0), page, `${offset}/${limit}`)
    }
  })
})

describe('parseListQuery', () => {
  const spec = {
    sortFields,
    defaultSort: { field: 'createdAt', order: 'desc' },
    filterFields: fields,
  } as const

  it('defaults to page 0, limit 30, the default sort and no filters', () => {
    assert.deepEqual(parseListQuery({}, spec), {
      limit: 30,
      page: 0,
      startingAfter: undefined,
      sort: { field: 'createdAt', order: 'desc' },
      filters: [],
    })
  })

  it('switches to keyset mode with starting_after, leaving page undefined', () => {
    assert.deepEqual(parseListQuery({ starting_after: 'lic_x', limit: 5, sort: 'key:asc' }, spec), {
      limit: 5,
      page: undefined,
      startingAfter: 'lic_x',
      sort: { field: 'key', order: 'asc' },
      filters: [],
    })
  })

  it('throws validation_failed at #/starting_after when page is given too, even page 0', () => {
    for (const page of [0, 2]) {
      assert.throws(
        () => parseListQuery({ page, starting_after: 'lic_x' }, spec),
        (error: unknown) =>
          error instanceof InvalidInputError && error.fieldErrors?.[0]?.pointer === '#/starting_after',
      )
    }
  })
})

/** Escapes a string for use inside a RegExp. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
