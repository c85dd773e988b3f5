/**
 * The portal's stylesheet and script, served from /portal/assets (the CSP allows files of this
 * origin only). Colours meet WCAG AA contrast on white; the layout is one column that fits a
 * 390 px phone and widens to 44rem.
 */
export const portalCss = `:root {
  --accent: #0b57d0;
  --text: #1a1a1a;
  --muted: #555555;
  --line: #d0d0d0;
  --danger: #b3261e;
  --primary: #0b57d0;
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--text); background: #ffffff; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: #ffffff; padding: 0.5rem; z-index: 1; }
.bar { display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: 0.75rem 1rem; border-top: 4px solid var(--accent); border-bottom: 1px solid var(--line); }
.brand { display: flex; align-items: center; gap: 0.5rem; font-weight: 600; overflow-wrap: anywhere; }
.brand img { width: auto; max-width: 8rem; }
main, footer { max-width: 44rem; margin: 0 auto; padding: 1rem; }
footer { color: var(--muted); font-size: 0.9rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.25rem; margin: 0 0 0.5rem; overflow-wrap: anywhere; }
h3 { font-size: 1rem; margin: 1rem 0 0.25rem; }
a { color: var(--primary); }
label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
input, select, textarea { display: block; width: 100%; font: inherit; padding: 0.6rem; border: 1px solid #767676; border-radius: 4px; margin-bottom: 0.75rem; }
button { font: inherit; min-height: 44px; padding: 0.5rem 1rem; border-radius: 4px; border: 1px solid var(--primary); background: var(--primary); color: #ffffff; cursor: pointer; }
button.secondary { background: #ffffff; color: var(--primary); }
button.danger { background: #ffffff; color: var(--danger); border-color: var(--danger); }
:focus-visible { outline: 3px solid #1a1a1a; outline-offset: 2px; }
form.inline { display: inline-block; margin: 0.25rem 0.5rem 0.25rem 0; }
.muted { color: var(--muted); }
.error { color: var(--danger); font-weight: 600; }
.notice { color: #1e6b2f; font-weight: 600; }
.license { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin-bottom: 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0 0 0.75rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
.key { font-family: ui-monospace, Menlo, Consolas, monospace; user-select: all; }
.status-active { color: #1e6b2f; font-weight: 600; }
.status-expired, .status-revoked { color: var(--danger); font-weight: 600; }
.machines { list-style: none; padding: 0; margin: 0; }
.machines li { display: flex; justify-content: space-between; align-items: center; gap: 0.5rem; padding: 0.5rem 0; border-top: 1px solid var(--line); flex-wrap: wrap; }
.machines li div { overflow-wrap: anywhere; }
.machines .actions form.inline { margin: 0.25rem 0 0.25rem 0.5rem; }
textarea { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.85rem; }
.file { font-size: 0.8rem; white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid var(--line); border-radius: 4px; padding: 0.75rem; background: #f6f6f6; }
`

/**
 * Copies a license key or file; the buttons stay hidden where the script does not run (the text is
 * selectable anyway). Reads a chosen request file into the form's text box (the file never leaves
 * the page any other way); without the script, the text is pasted.
 */
export const portalJs = `for (const button of document.querySelectorAll('button.copy')) {
  const target = document.getElementById(button.dataset.copy || '')
  if (!target || !navigator.clipboard) continue
  button.hidden = false
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(target.textContent || '')
    button.textContent = 'Copied'
  })
}
for (const input of document.querySelectorAll('input[type=file][data-into]')) {
  const target = document.getElementById(input.dataset.into || '')
  const pick = input.closest('.file-pick')
  if (!target || !pick) continue
  pick.hidden = false
  input.addEventListener('change', async () => {
    const file = input.files && input.files[0]
    if (!file) return
    const max = Number(input.dataset.max || '0')
    input.setCustomValidity(file.size > max ? 'A request file is at most ' + max + ' bytes: this is not one.' : '')
    if (!input.reportValidity()) return
    target.value = await file.text()
  })
}
`

/** A product's accent colour (validated `#rrggbb` when stored) as the portal stylesheet's variable. */
export function accentCss(accentColor: string | null): string {
  return accentColor !== null && /^#[0-9a-fA-F]{6}$/.test(accentColor)
    ? `:root { --accent: ${accentColor}; }\n`
    : ''
}
