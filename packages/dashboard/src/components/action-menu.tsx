import { Button, Menu } from '@mantine/core'

export interface MenuAction {
  /** The item's label, e.g. "Renew…" (an ellipsis: it opens a dialog that asks more). */
  readonly label: string
  readonly onSelect: () => void
  readonly danger?: boolean
}

/**
 * A menu button (Mantine's Menu, the WAI-ARIA menu button pattern): the button opens a list of
 * actions; arrow keys move between them, Enter or a click chooses one, Escape closes the menu and
 * focus goes back to the button.
 */
export function ActionMenu({
  label,
  actions,
}: {
  readonly label: string
  readonly actions: readonly MenuAction[]
}) {
  return (
    <Menu position="bottom-end" width={260}>
      <Menu.Target>
        <Button variant="default" rightSection={<span aria-hidden="true">▾</span>}>
          {label}
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        {actions.map((action) => (
          <Menu.Item key={action.label} color={action.danger ? 'red.9' : undefined} onClick={action.onSelect}>
            {action.label}
          </Menu.Item>
        ))}
      </Menu.Dropdown>
    </Menu>
  )
}
