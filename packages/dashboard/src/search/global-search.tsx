import type { SearchHit } from '@keyturn/client'
import { Button, Group, TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { type KeyboardEvent as ReactKeyboardEvent, useEffect, useId, useRef, useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { ProblemMessage } from '../components/problem-message.js'
import { useSession } from '../session/session.js'

/** How long typing must pause before the query goes out: one request per word, not per keystroke. */
const pauseMs = 200

/** The screen a hit opens: a license, a customer, or the license of a machine. */
export function hitPath(hit: SearchHit): string {
  if (hit.object === 'Customer') {
    return `/customers/${hit.id}`
  }
  return `/licenses/${hit.licenseId ?? hit.id}`
}

/** Whether a key press belongs to a field being typed in (where `/` is a character, not a shortcut). */
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) {
    return false
  }
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)
}

/** Opens the search (unless open) with its text selected, so typing replaces the last query. */
function showDialog(dialog: HTMLDialogElement | null, input: HTMLInputElement | null): void {
  if (dialog !== null && !dialog.open) {
    dialog.showModal()
  }
  input?.focus()
  input?.select()
}

/** Up and down arrows move between the hits; up from the first goes back to the box. */
function moveFocus(
  event: ReactKeyboardEvent<HTMLUListElement>,
  list: HTMLUListElement | null,
  input: HTMLInputElement | null,
): void {
  if (list === null || (event.key !== 'ArrowDown' && event.key !== 'ArrowUp')) {
    return
  }
  event.preventDefault()
  const links = [...list.querySelectorAll('a')]
  const at = links.findIndex((link) => link === document.activeElement)
  const next = at + (event.key === 'ArrowDown' ? 1 : -1)
  if (next < 0) {
    input?.focus()
  } else {
    links[Math.min(next, links.length - 1)]?.focus()
  }
}

/**
 * The search box of every screen: `/` or Ctrl-K (⌘K) opens it, from anywhere but a field being
 * typed in; Escape closes it. Keys, emails, names, fingerprints and ids, as `GET /search` takes
 * them; each hit links to its screen, Enter opens the first, and the arrow keys move between hits.
 */
export function GlobalSearch() {
  const dialog = useRef<HTMLDialogElement>(null)
  const input = useRef<HTMLInputElement>(null)
  const list = useRef<HTMLUListElement>(null)
  const titleId = useId()
  const [text, setText] = useState('')
  const [query, setQuery] = useState('')
  const navigate = useNavigate()
  const { client } = useSession()

  useEffect(() => {
    const open = (event: KeyboardEvent) => {
      const slash = event.key === '/' && !event.ctrlKey && !event.metaKey && !event.altKey
      const ctrlK = (event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k'
      if ((slash && !isTyping(event.target)) || ctrlK) {
        event.preventDefault()
        showDialog(dialog.current, input.current)
      }
    }
    document.addEventListener('keydown', open)
    return () => document.removeEventListener('keydown', open)
  }, [])

  useEffect(() => {
    const timer = setTimeout(() => setQuery(text.trim()), pauseMs)
    return () => clearTimeout(timer)
  }, [text])

  const results = useQuery({
    queryKey: ['search', query],
    queryFn: () => client.search(query),
    enabled: query !== '',
  })

  const show = () => showDialog(dialog.current, input.current)
  const close = () => dialog.current?.close()
  const hits = query === '' ? [] : (results.data?.data ?? [])
  const settled = query !== '' && query === text.trim() && results.isSuccess

  return (
    <>
      <Button variant="default" onClick={show} aria-keyshortcuts="/ Control+K" rightSection={<kbd>/</kbd>}>
        Search
      </Button>
      <dialog ref={dialog} className="search" aria-labelledby={titleId}>
        <h2 id={titleId} className="visually-hidden">
          Search
        </h2>
        <form
          onSubmit={(event) => {
            event.preventDefault()
            const first = hits[0]
            if (settled && first !== undefined) {
              close()
              void navigate(hitPath(first))
            }
          }}
        >
          <TextInput
            ref={input}
            label="Find a license, customer or machine"
            type="search"
            value={text}
            maxLength={256}
            autoComplete="off"
            placeholder="Key, email, name, fingerprint or id"
            onChange={(event) => setText(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'ArrowDown') {
                event.preventDefault()
                list.current?.querySelector('a')?.focus()
              }
            }}
          />
        </form>
        <ProblemMessage error={results.error} />
        {settled && hits.length === 0 && <p role="status">Nothing found.</p>}
        {hits.length > 0 && (
          <ul
            aria-label="Search results"
            ref={list}
            onKeyDown={(event) => moveFocus(event, list.current, input.current)}
          >
            {hits.map((hit) => (
              <li key={hit.id}>
                <Link to={hitPath(hit)} onClick={close}>
                  <span>
                    {hit.object === 'Activation' ? 'Machine' : hit.object}: <strong>{hit.title}</strong>
                  </span>
                  <span className="muted">
                    {hit.subtitle === ''
                      ? `matched by ${hit.matched}`
                      : `${hit.subtitle} · matched by ${hit.matched}`}
                  </span>
                </Link>
              </li>
            ))}
          </ul>
        )}
        <Group mt="sm">
          <Button variant="default" onClick={close}>
            Close
          </Button>
        </Group>
      </dialog>
    </>
  )
}
