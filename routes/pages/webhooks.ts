import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { ConflictError, isOwner, ValidationError } from '../../services/shared';
import { WEBHOOK_EVENTS } from '../../services/webhooks';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';
import { createOnce, errorsByInput, formValues, pageMessage, redirectWithNotice } from './forms';
import { translateMessage } from './view-helpers';
import type { FormState } from './forms';

/** The checked event boxes of a form (`events` once per box). */
function checkedEvents(req: Request): string[] {
  const given = req.body?.events;
  return (Array.isArray(given) ? given : given === undefined ? [] : [given]).filter((e): e is string => typeof e === 'string');
}

/** /webhooks: endpoints, their events, secret, test event and delivery log. */
export function webhookPages(services: Services): Router {
  const router = Router();
  router.use('/webhooks', requirePageWorkspace);
  const workspaceId = (req: Request) => workspaceOf(req).workspace.id;
  // With the caller's role: endpoints are the owner's to change (members get a 403 page).
  const workspace = (req: Request) => workspaceOf(req).workspace;

  async function renderList(req: Request, res: Response, status = 200, form: FormState & { events?: string[] } = {}) {
    res.status(status).render('webhooks', {
      endpoints: await services.webhooks.list(workspaceId(req)),
      isOwner: isOwner(workspace(req)),
      allEvents: WEBHOOK_EVENTS,
      values: form.values ?? { url: '', description: '' },
      checked: form.events ?? [...WEBHOOK_EVENTS],
      errors: form.errors ?? {},
    });
  }

  async function renderEndpoint(req: Request, res: Response, status = 200, form: FormState & { events?: string[] } = {}) {
    const id = String(req.params.id);
    const endpoint = await services.webhooks.get(workspaceId(req), id);
    const owner = isOwner(workspace(req));
    const [secret, deliveries, deliveryErrors, disabledReason] = await Promise.all([
      owner ? services.webhooks.secret(workspace(req), id) : null,
      services.webhooks.deliveries(workspaceId(req), id),
      services.webhooks.deliveryErrors(workspaceId(req), id),
      services.webhooks.disabledReason(workspaceId(req), id),
    ]);
    if (secret) secretAnswer(res);
    res.status(status).render('webhook', {
      endpoint,
      disabledReason,
      secret,
      isOwner: owner,
      deliveries,
      deliveryErrors,
      allEvents: WEBHOOK_EVENTS,
      values: form.values ?? { url: endpoint.url, description: endpoint.description ?? '' },
      checked: form.events ?? endpoint.events,
      errors: form.errors ?? {},
    });
  }

  router.get('/webhooks', (req, res) => renderList(req, res));

  router.post('/webhooks', async (req, res) => {
    const values = formValues(req, ['url', 'description'] as const);
    const events = checkedEvents(req);
    try {
      const endpoint = await createOnce(req, res, services.formTokens, 'webhook', '/webhooks', (db) =>
        services.webhooks.create(workspace(req), { ...values, events }, db),
      );
      if (!endpoint) return;
      await redirectWithNotice(req, res, `/webhooks/${endpoint.id}`, req.t('webhooksPage.notice.added'));
    } catch (err) {
      if (err instanceof ConflictError) return renderList(req, res, 409, { values, events, errors: { form: pageMessage(err) } });
      if (!(err instanceof ValidationError)) throw err;
      await renderList(req, res, 400, { values, events, errors: errorsByInput(err) });
    }
  });

  router.get('/webhooks/:id', (req, res) => renderEndpoint(req, res));

  router.post('/webhooks/:id', async (req, res) => {
    const values = formValues(req, ['url', 'description'] as const);
    const events = checkedEvents(req);
    try {
      await services.webhooks.update(workspace(req), String(req.params.id), { ...values, events });
      await redirectWithNotice(req, res, `/webhooks/${req.params.id}`, req.t('webhooksPage.notice.saved'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderEndpoint(req, res, 400, { values, events, errors: errorsByInput(err) });
    }
  });

  router.post('/webhooks/:id/enabled', async (req, res) => {
    const enabled = formValues(req, ['enabled'] as const).enabled === 'true';
    await services.webhooks.update(workspace(req), String(req.params.id), { enabled });
    await redirectWithNotice(req, res, `/webhooks/${req.params.id}`, req.t(enabled ? 'webhooksPage.notice.enabled' : 'webhooksPage.notice.disabled'));
  });

  router.post('/webhooks/:id/rotate-secret', async (req, res) => {
    await services.webhooks.rotateSecret(workspace(req), String(req.params.id));
    await redirectWithNotice(req, res, `/webhooks/${req.params.id}`, req.t('webhooksPage.notice.rotated'));
  });

  router.post('/webhooks/:id/test', async (req, res) => {
    try {
      await services.webhooks.sendTest(workspace(req), String(req.params.id));
      await redirectWithNotice(req, res, `/webhooks/${req.params.id}`, req.t('webhooksPage.notice.test'));
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      await redirectWithNotice(req, res, `/webhooks/${req.params.id}`, translateMessage(req.t, pageMessage(err)));
    }
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/resend', async (req, res) => {
    try {
      await services.webhooks.resend(workspace(req), String(req.params.id), String(req.params.deliveryId));
      await redirectWithNotice(req, res, `/webhooks/${req.params.id}`, req.t('webhooksPage.notice.resent'));
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      await redirectWithNotice(req, res, `/webhooks/${req.params.id}`, translateMessage(req.t, pageMessage(err)));
    }
  });

  router.get('/webhooks/:id/delete', async (req, res) => {
    res.render('webhook-delete', { endpoint: await services.webhooks.get(workspaceId(req), String(req.params.id)), isOwner: isOwner(workspace(req)) });
  });

  router.post('/webhooks/:id/delete', async (req, res) => {
    const endpoint = await services.webhooks.get(workspaceId(req), String(req.params.id));
    await services.webhooks.remove(workspace(req), endpoint.id);
    await redirectWithNotice(req, res, '/webhooks', req.t('webhooksPage.notice.deleted', { url: endpoint.url }));
  });
  return router;
}
