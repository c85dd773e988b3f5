#!/usr/bin/env node
// Writes packages/protocol/openapi.json from the route schemas (the same document GET /openapi.json
// serves), and the table of docs/errors.md from the error catalogue (packages/protocol/src/errors.ts).
// Run through `npm run openapi` (which builds first); commit the result. openapi.test.ts and
// problem-pages.test.ts fail when either is out of date.
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { errorCatalogueMarkdown, openApiJson } from '../packages/server/dist/main.js'

const target = resolve(import.meta.dirname, '..', 'packages', 'protocol', 'openapi.json')
const json = await openApiJson()
writeFileSync(target, json)
const { paths } = JSON.parse(json)
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const operations = Object.values(paths).reduce(
  (count, item) => count + Object.keys(item).filter((key) => methods.includes(key)).length,
  0,
)
console.log(`Wrote ${target}: ${operations} operations, ${json.length} bytes.`)

const errorsPath = resolve(import.meta.dirname, '..', 'docs', 'errors.md')
const [before, rest] = readFileSync(errorsPath, 'utf8').split('<!-- catalogue:start -->')
const [, after] = rest.split('<!-- catalogue:end -->')
writeFileSync(
  errorsPath,
  `${before}<!-- catalogue:start -->\n${errorCatalogueMarkdown()}\n<!-- catalogue:end -->${after}`,
)
console.log(`Wrote the error table of ${errorsPath}.`)
