import { useEffect, useMemo } from 'react'

/**
 * An object URL for downloading `text` as a plain-text file (a license file, say), made once per
 * text and revoked when the text changes or the screen goes; `undefined` while there is no text.
 */
export function useTextDownload(text: string | undefined): string | undefined {
  const url = useMemo(
    () => (text === undefined ? undefined : URL.createObjectURL(new Blob([text], { type: 'text/plain' }))),
    [text],
  )
  useEffect(() => () => (url === undefined ? undefined : URL.revokeObjectURL(url)), [url])
  return url
}
