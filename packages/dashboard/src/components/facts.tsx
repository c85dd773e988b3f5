import type { ReactNode } from 'react'

/** A record's facts (the top of a detail screen): a list of {@link Fact}s. */
export function Facts({ children }: { readonly children: ReactNode }) {
  return <dl className="facts">{children}</dl>
}

/** One of a record's facts: what it is, then its value. */
export function Fact({ term, children }: { readonly term: string; readonly children: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </>
  )
}
