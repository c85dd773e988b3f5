#!/usr/bin/env node
// Writes conformance/vectors.json, the vectors every Keyturn SDK must answer alike
// (packages/server/src/conformance/vectors.ts). Run through `npm run conformance` (which builds
// first); commit the result. packages/server/src/conformance/vectors.test.ts fails when it is stale.
import { mkdirSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { conformanceVectorsJson } from '../packages/server/dist/conformance/vectors.js'

const directory = resolve(import.meta.dirname, '..', 'conformance')
mkdirSync(directory, { recursive: true })
const target = resolve(directory, 'vectors.json')
const json = await conformanceVectorsJson()
writeFileSync(target, json)
const { tokens, signedAnswers, webhooks, fingerprints, activationRequests, deactivationCodes } =
  JSON.parse(json)
console.log(
  `Wrote ${target}: ${tokens.length} tokens, ${signedAnswers.length} signed answers, ${webhooks.length} webhooks, ${fingerprints.length} fingerprints, ${activationRequests.length} activation requests, ${deactivationCodes.length} deactivation codes.`,
)
