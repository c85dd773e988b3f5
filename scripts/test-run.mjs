// node --test, but the files run in the order given: `node --test a b` sorts its files by name, while
// node:test's run() takes them as listed (scripts/test.mjs lists the slowest first). Started by
// scripts/test.mjs with its --import flags, which run() passes on to every test file's process.
//   node [flags] scripts/test-run.mjs <concurrency> <file>…
import { run } from 'node:test'
import Reporter from './test-reporter.mjs'

const [concurrency, ...files] = process.argv.slice(2)
run({ files, concurrency: Number(concurrency) })
  .on('test:fail', () => {
    process.exitCode = 1
  })
  .compose(new Reporter())
  .pipe(process.stdout)
