import type { LicenseResource } from '@keyturn/client'
import { useState } from 'react'
import { ActionMenu, type MenuAction } from '../../components/action-menu.js'
import { isAdmin, may, useSession } from '../../session/session.js'
import { ChangePlanDialog, EditDialog } from './edit-dialogs.js'
import { IssueFileDialog, IssueTokenDialog } from './issue-dialogs.js'
import { RenewDialog, RevokeDialog } from './status-dialogs.js'
import { ValidateDialog } from './validate-dialog.js'

type ActionName = 'edit' | 'plan' | 'renew' | 'token' | 'file' | 'validate' | 'revoke'

/**
 * The license's actions in one menu, each in a dialog: what the operator's role cannot do is not
 * offered (viewers validate; support also revokes and reinstates; admins do everything).
 */
export function LicenseActions({ license }: { readonly license: LicenseResource }) {
  const session = useSession()
  const [open, setOpen] = useState<ActionName>()
  const item = (label: string, name: ActionName, danger = false): MenuAction => ({
    label,
    onSelect: () => setOpen(name),
    danger,
  })
  const revoked = license.statusDetails.isRevoked
  const actions: MenuAction[] = [
    ...(isAdmin(session)
      ? [
          item('Edit…', 'edit'),
          item('Change plan…', 'plan'),
          item('Renew…', 'renew'),
          item('Issue token…', 'token'),
          item('Issue license file…', 'file'),
        ]
      : []),
    item('Validate as the app would…', 'validate'),
    ...(may(session, 'support')
      ? [item(revoked ? 'Reinstate license…' : 'Revoke license…', 'revoke', !revoked)]
      : []),
  ]
  const close = () => setOpen(undefined)
  return (
    <>
      <ActionMenu label="Actions" actions={actions} />
      {open === 'edit' && <EditDialog license={license} onClose={close} />}
      {open === 'plan' && <ChangePlanDialog license={license} onClose={close} />}
      {open === 'renew' && <RenewDialog license={license} onClose={close} />}
      {open === 'token' && <IssueTokenDialog license={license} onClose={close} />}
      {open === 'file' && <IssueFileDialog license={license} onClose={close} />}
      {open === 'validate' && <ValidateDialog license={license} onClose={close} />}
      {open === 'revoke' && <RevokeDialog license={license} onClose={close} />}
    </>
  )
}
