#!/usr/bin/env node
// Writes packages/protocol/openapi.json from the route schemas: the same document GET /openapi.json
// serves. Run through `npm run openapi` (which builds first); commit the result.
// packages/server/src/http/openapi.test.ts fails when the committed file is out of date.
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { openApiJson } from '../packages/server/dist/main.js'

const target = resolve(import.meta.dirname, '..', 'packages', 'protocol', 'openapi.json')
const json = await openApiJson()
writeFileSync(target, json)
const { paths } = JSON.parse(json)
const operations = Object.values(paths).reduce((count, methods) => count + Object.keys(methods).length, 0)
console.log(`Wrote ${target}: ${operations} operations, ${json.length} bytes.`)
