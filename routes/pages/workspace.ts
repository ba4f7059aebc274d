import { Router } from 'express';
import { languageOf } from '../middleware/i18n';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { ConflictError, isOwner, ValidationError } from '../../services/shared';
import type { NewInvitation } from '../../services/accounts';
import type { AuditPage } from '../../services/audit';
import { forgetContext, requirePageUser, requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';
import { createOnce, errorsByInput, formValues, pageMessage, redirectWithNotice } from './forms';
import { translateMessage } from './view-helpers';

export function workspacePages(services: Services): Router {
  const router = Router();
  router.use('/workspace', requirePageUser);

  async function renderWorkspace(req: Request, res: Response, status = 200, form: object = {}, newInvitation: NewInvitation | null = null) {
    const workspace = req.ctx!.workspace;
    const [members, invitations] = workspace
      ? await Promise.all([services.workspaces.members(workspace.id), isOwner(workspace) ? services.invitations.list(workspace) : []])
      : [[], []];
    res.status(status).render('workspace', { members, invitations, newInvitation, values: {}, errors: {}, ...form });
  }

  /** Runs a form action; a validation failure re-renders the page with the input and messages. */
  async function handleForm(req: Request, res: Response, field: string, action: (value: string) => Promise<string>) {
    const values = formValues(req, [field]);
    try {
      await redirectWithNotice(req, res, '/workspace', await action(values[field]));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderWorkspace(req, res, 400, { values, errors: errorsByInput(err) });
    }
  }

  router.get('/workspace', (req, res) => renderWorkspace(req, res));

  /** The audit log (the owner's; a member gets the 403 page): 50 events a page, newest first. */
  router.get('/workspace/audit', requirePageWorkspace, async (req, res) => {
    const { workspace } = workspaceOf(req);
    const asked = { older: req.query.older, newer: req.query.newer };
    let page: AuditPage;
    try {
      page = await services.audit.list(workspace, asked);
    } catch (err) {
      // An edited link shows the newest page, as the other lists do.
      if (!(err instanceof ValidationError)) throw err;
      page = await services.audit.list(workspace);
    }
    res.set('Cache-Control', 'no-store').render('workspace-audit', {
      events: page.events,
      olderLink: page.older ? `/workspace/audit?older=${page.older}` : null,
      newerLink: page.newer ? `/workspace/audit?newer=${page.newer}` : null,
      firstLink: page.newer ? '/workspace/audit' : null,
    });
  });

  router.post('/workspace/members/:userId/remove', requirePageWorkspace, async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    const member = (await services.workspaces.members(workspace.id)).find((m) => m.user_id === req.params.userId);
    try {
      await services.members.remove(workspace, user.id, String(req.params.userId));
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      return redirectWithNotice(req, res, '/workspace', translateMessage(req.t, pageMessage(err)));
    }
    await redirectWithNotice(
      req,
      res,
      '/workspace',
      member ? req.t('workspacePage.notice.removed', { name: member.name }) : req.t('workspacePage.notice.removedSomeone'),
    );
  });

  router.post('/workspace/leave', requirePageWorkspace, async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    try {
      await services.members.remove(workspace, user.id, user.id, req.sessionID);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      return redirectWithNotice(req, res, '/workspace', translateMessage(req.t, pageMessage(err)));
    }
    forgetContext(req);
    await redirectWithNotice(req, res, '/workspace', req.t('workspacePage.notice.left', { workspace: workspace.name }));
  });

  router.post('/workspace', (req, res) =>
    handleForm(req, res, 'name', async (name) => {
      await services.workspaces.create(req.ctx!.user.id, name, undefined, languageOf(req));
      forgetContext(req);
      return req.t('workspacePage.notice.created', { workspace: name.trim() });
    }),
  );

  router.post('/workspace/invitations', requirePageWorkspace, async (req, res) => {
    const values = formValues(req, ['email']);
    const { user, workspace } = workspaceOf(req);
    try {
      const created = await createOnce(req, res, services.formTokens, 'invitation', '/workspace', (db) =>
        services.invitations.create(workspace, user.id, values, db),
      );
      if (!created) return;
      // The join link is in this answer only: never in the session, a notice or a cache.
      secretAnswer(res);
      res.locals.notice = req.t('workspacePage.notice.linkCreated', { email: created.email });
      await renderWorkspace(req, res, 201, {}, created);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderWorkspace(req, res, 400, { values, errors: errorsByInput(err) });
    }
  });

  router.post('/workspace/invitations/:id/revoke', requirePageWorkspace, async (req, res) => {
    await services.invitations.revoke(workspaceOf(req).workspace, String(req.params.id));
    await redirectWithNotice(req, res, '/workspace', req.t('workspacePage.notice.withdrawn'));
  });
  return router;
}
