import { Router } from 'express';
import { secretAnswer } from '../middleware/compression';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import type { Agent } from '../../services/agents';
import { isOwner, ValidationError } from '../../services/errors';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { createOnce, errorsByInput, formValues, redirectWithNotice } from './forms';
import type { FormState } from './forms';

const AGENT_FIELDS = ['name', 'order_handler', 'kind', 'endpoint_url'] as const;
const FORM_FIELD: Record<string, string> = { endpointUrl: 'endpoint_url' };
const LABELS: Record<string, string> = { endpointUrl: 'The endpoint URL' };
const CHECKED = new Set(['1', 'on', 'true']);

export function agentPages(services: Services): Router {
  const router = Router();
  router.use('/agents', requirePageWorkspace);
  const workspaceId = (req: Request) => workspaceOf(req).workspace.id;
  // With the caller's role: voice agents are the owner's (members get a 403 page).
  const workspace = (req: Request) => workspaceOf(req).workspace;

  async function renderAgents(req: Request, res: Response, status = 200, form: FormState = {}, created: Agent | null = null) {
    const agents = await services.agents.list(workspaceId(req));
    const hasHandler = agents.some((agent) => agent.is_order_handler);
    res.status(status).render('agents', {
      agents,
      hasHandler,
      created,
      isOwner: isOwner(workspace(req)),
      // With no handler yet, the next agent most likely is the one: the box starts checked.
      values: form.values ?? { name: '', order_handler: hasHandler ? '' : '1', kind: 'human', endpoint_url: '' },
      errors: form.errors ?? {},
    });
  }

  router.get('/agents', (req, res) => renderAgents(req, res));

  router.post('/agents', async (req, res) => {
    const values = formValues(req, AGENT_FIELDS);
    const orderHandler = CHECKED.has(values.order_handler);
    const endpointUrl = values.endpoint_url.trim();
    try {
      const agent = await createOnce(req, res, services.formTokens, 'agent', '/agents', (db) =>
        services.agents.create(
          workspace(req),
          {
            name: values.name,
            orderHandler,
            kind: values.kind || 'human',
            endpointUrl: endpointUrl === '' && values.kind !== 'voice' ? undefined : endpointUrl,
          },
          db,
        ),
      );
      if (!agent) return;
      const added = req.t(orderHandler ? 'agentsPage.notice.addedHandler' : 'agentsPage.notice.added', { name: agent.name });
      if (!agent.secret) return redirectWithNotice(req, res, '/agents', added);
      // A voice agent's secret is in this response: never in the session, a URL or a cache.
      secretAnswer(res);
      res.locals.notice = `${added} ${req.t('agentsPage.notice.giveSecret')}`;
      await renderAgents(req, res, 201, {}, agent);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderAgents(req, res, 400, { values, errors: errorsByInput(err, FORM_FIELD, LABELS) });
    }
  });

  router.get('/agents/:id', async (req, res) => {
    const agent = await services.agents.get(workspaceId(req), String(req.params.id));
    const owner = isOwner(workspace(req));
    const secret = agent.kind === 'voice' && owner ? await services.agents.secret(workspace(req), agent.id) : null;
    if (secret) secretAnswer(res);
    res.render('agent', { agent, secret, isOwner: owner });
  });

  router.post('/agents/:id/rotate-secret', async (req, res) => {
    const agent = await services.agents.rotateSecret(workspace(req), String(req.params.id));
    secretAnswer(res);
    res.locals.notice = req.t('agentsPage.notice.rotated');
    res.render('agent', { agent, secret: agent.secret, isOwner: true });
  });

  router.post('/agents/:id/order-handler', async (req, res) => {
    const agent = await services.agents.update(workspace(req), String(req.params.id), { orderHandler: true });
    await redirectWithNotice(req, res, '/agents', req.t('agentsPage.notice.nowHandler', { name: agent.name }));
  });
  return router;
}
