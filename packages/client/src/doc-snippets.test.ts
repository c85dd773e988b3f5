/**
 * @module The TypeScript in the docs compiles: every ```ts / ```typescript block of README.md and
 * docs/**\/*.md is type-checked in strict mode against the built client (`@keyturn/client` as an
 * application installs it), in one TypeScript program. A fragment declares its free variables in
 * an HTML comment right before its fence, which the reader does not see:
 *
 *   <!-- ts-prelude
 *   declare const keyturn: import('@keyturn/client').KeyturnClient
 *   declare const PRODUCT_ID: string
 *   -->
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { it } from 'node:test'
import ts from 'typescript'

// src/ when run from source, dist-test/ when compiled: either way two levels below the repository.
const root = resolve(import.meta.dirname, '../../..')

interface Snippet {
  /** Where the code starts: `docs/guides/tokens.md:42`. */
  readonly source: string
  readonly markdownFile: string
  /** The line (1-based) of the markdown file that the snippet's first line is. */
  readonly firstLine: number
  readonly prelude: string
  readonly code: string
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true })
    .map(String)
    .filter((path) => path.endsWith('.md'))
    .map((path) => join('docs', path))
  return ['README.md', ...docs.sort()]
}

function snippetsOf(markdownFile: string): Snippet[] {
  const text = readFileSync(join(root, markdownFile), 'utf8')
  const fence = /(?:<!--\s*ts-prelude\n([\s\S]*?)-->\n)?```(?:ts|typescript)\n([\s\S]*?)```/g
  return [...text.matchAll(fence)].map((match) => {
    const codeStart = match.index + match[0].indexOf('```')
    const firstLine = text.slice(0, codeStart).split('\n').length + 1
    return {
      source: `${markdownFile}:${firstLine}`,
      markdownFile,
      firstLine,
      prelude: match[1] ?? '',
      code: match[2] ?? '',
    }
  })
}

it('compiles every TypeScript snippet of the README and docs/ in strict mode against the built client', () => {
  const snippets = markdownFiles().flatMap(snippetsOf)
  assert.ok(snippets.length >= 8, `found only ${snippets.length} TypeScript snippets`)

  // Inside packages/client (an ES module package), so `@keyturn/client` resolves through the
  // workspace's node_modules to the built package, as in an application that installed it.
  const files = new Map(
    snippets.map((snippet, index) => {
      const path = join(root, 'packages', 'client', 'doc-snippets', `snippet-${index}.mts`)
      // The prelude goes on the snippet's first line, so line numbers stay the markdown's.
      const prelude = snippet.prelude
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => `${line}; `)
        .join('')
      return [path, { snippet, text: `${prelude}${snippet.code}\nexport {}\n` }]
    }),
  )
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: ['node'],
  }
  const host = ts.createCompilerHost(options)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (path) => files.has(path) || fileExists(path)
  host.readFile = (path) => files.get(path)?.text ?? readFile(path)
  host.getSourceFile = (path, language, ...rest) => {
    const file = files.get(path)
    return file ? ts.createSourceFile(path, file.text, language) : getSourceFile(path, language, ...rest)
  }
  const program = ts.createProgram([...files.keys()], options, host)

  const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    const file = diagnostic.file && files.get(diagnostic.file.fileName)
    if (!file || diagnostic.file === undefined || diagnostic.start === undefined) {
      return `TS${diagnostic.code}: ${message}`
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return `${file.snippet.markdownFile}:${file.snippet.firstLine + line}: TS${diagnostic.code}: ${message}`
  })
  assert.deepEqual(problems, [], `in ${relative(process.cwd(), root) || '.'}`)
})
