import { Router } from 'express';
import { secretAnswer } from '../middleware/compression';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import type { Agent } from '../../services/agents';
import { isOwner, ValidationError } from '../../services/shared';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { createOnce, errorsByInput, formValues, redirectWithNotice } from './forms';
import type { FormState } from './forms';
import { TEMPLATE_TEXTS } from '../../services/whatsapp';

/** A WhatsApp agent's connection, as the add form names its inputs (the JSON API's snake_case names). */
const WHATSAPP_FIELDS = [
  'phone_number_id',
  'access_token',
  'app_secret',
  'template_name',
  'template_language',
  'reply_window_hours',
  'fallback_agent_id',
] as const;
const AGENT_FIELDS = ['name', 'order_handler', 'kind', 'endpoint_url', ...WHATSAPP_FIELDS] as const;
const FORM_FIELD: Record<string, string> = {
  endpointUrl: 'endpoint_url',
  phoneNumberId: 'phone_number_id',
  accessToken: 'access_token',
  appSecret: 'app_secret',
  templateName: 'template_name',
  templateLanguage: 'template_language',
  replyWindowHours: 'reply_window_hours',
  fallbackAgentId: 'fallback_agent_id',
};
/** What the add form starts with: a WhatsApp agent's usual template and reply window. */
const EMPTY_FORM = {
  name: '',
  kind: 'human',
  endpoint_url: '',
  phone_number_id: '',
  access_token: '',
  app_secret: '',
  template_name: 'order_confirmation',
  template_language: 'fr',
  reply_window_hours: '4',
  fallback_agent_id: '',
};
const LABELS: Record<string, string> = { endpointUrl: 'The endpoint URL' };
const CHECKED = new Set(['1', 'on', 'true']);

/** The WhatsApp inputs as the service reads them; an empty input is left out, for the service to name as missing. */
function whatsappValues(values: Record<(typeof WHATSAPP_FIELDS)[number], string>): Record<string, string> {
  return Object.fromEntries(WHATSAPP_FIELDS.filter((name) => values[name].trim() !== '').map((name) => [name, values[name]]));
}

export function agentPages(services: Services): Router {
  const router = Router();
  router.use('/agents', requirePageWorkspace);
  const workspaceId = (req: Request) => workspaceOf(req).workspace.id;
  // With the caller's role: voice agents are the owner's (members get a 403 page).
  const workspace = (req: Request) => workspaceOf(req).workspace;

  async function renderAgents(req: Request, res: Response, status = 200, form: FormState = {}, created: Agent | null = null) {
    const agents = await services.agents.list(workspaceId(req));
    const hasHandler = agents.some((agent) => agent.is_order_handler);
    // A WhatsApp agent whose message did not go out in the last hour is marked (its page says why).
    const hourAgo = Date.now() - 3_600_000;
    const recentErrors = new Set(agents.filter((a) => a.last_error_at && Date.parse(a.last_error_at) > hourAgo).map((a) => a.id));
    res.status(status).render('agents', {
      agents,
      recentErrors,
      hasHandler,
      created,
      isOwner: isOwner(workspace(req)),
      // With no handler yet, the next agent most likely is the one: the box starts checked.
      values: form.values ?? { ...EMPTY_FORM, order_handler: hasHandler ? '' : '1' },
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
            // The WhatsApp inputs count for a WhatsApp agent only (the form shows them to the owner for every kind).
            ...(values.kind === 'whatsapp' ? whatsappValues(values) : {}),
          },
          db,
        ),
      );
      if (!agent) return;
      const added = req.t(orderHandler ? 'agentsPage.notice.addedHandler' : 'agentsPage.notice.added', { name: agent.name });
      // A WhatsApp agent's page has its verify token and the steps in Meta's dashboard.
      if (agent.kind === 'whatsapp') return redirectWithNotice(req, res, `/agents/${agent.id}`, `${added} ${req.t('whatsapp.nextSteps')}`);
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
    const verifyToken = agent.kind === 'whatsapp' && owner ? await services.agents.verifyToken(workspace(req), agent.id) : null;
    if (secret || verifyToken) secretAnswer(res);
    res.render('agent', { agent, secret, isOwner: owner, ...(await ladderLocals(req, agent)), verifyToken });
  });

  // The ladder: who takes an order over when this agent's operation ends without an answer.
  router.post('/agents/:id/fallback', async (req, res) => {
    const { fallback_agent_id: fallbackAgentId } = formValues(req, ['fallback_agent_id'] as const);
    try {
      const agent = await services.agents.update(workspace(req), String(req.params.id), { fallbackAgentId: fallbackAgentId || null });
      await redirectWithNotice(req, res, `/agents/${agent.id}`, req.t('whatsapp.fallbackSaved', { name: agent.name }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const agent = await services.agents.get(workspaceId(req), String(req.params.id));
      const owner = isOwner(workspace(req));
      const verifyToken = agent.kind === 'whatsapp' && owner ? await services.agents.verifyToken(workspace(req), agent.id) : null;
      if (verifyToken) secretAnswer(res);
      res.status(400).render('agent', {
        agent,
        secret: null,
        isOwner: owner,
        ...(await ladderLocals(req, agent)),
        verifyToken,
        errors: errorsByInput(err, { fallbackAgentId: 'fallback_agent_id' }),
      });
    }
  });

  /** What the agent page shows of the ladder and, for WhatsApp, the template to submit. */
  async function ladderLocals(req: Request, agent: Agent) {
    const others = (await services.agents.list(workspaceId(req))).filter((a) => a.id !== agent.id);
    const fallback = others.find((a) => a.id === agent.fallback_agent_id);
    return { fallbackName: fallback?.name ?? null, others, templates: TEMPLATE_TEXTS, errors: {} };
  }

  router.post('/agents/:id/rotate-secret', async (req, res) => {
    const agent = await services.agents.rotateSecret(workspace(req), String(req.params.id));
    secretAnswer(res);
    res.locals.notice = req.t('agentsPage.notice.rotated');
    res.render('agent', { agent, secret: agent.secret, isOwner: true, ...(await ladderLocals(req, agent)), verifyToken: null });
  });

  router.post('/agents/:id/order-handler', async (req, res) => {
    const agent = await services.agents.update(workspace(req), String(req.params.id), { orderHandler: true });
    await redirectWithNotice(req, res, '/agents', req.t('agentsPage.notice.nowHandler', { name: agent.name }));
  });
  return router;
}
