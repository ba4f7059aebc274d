import { z } from 'zod';
import { AGENT_KINDS, createSchema, editSchema } from '../services/agents';
import type { OpenApiBuilder } from './builder';
import { named } from './builder';
import { BODY_ERRORS, errors, instant, NOT_FOUND, OWNER_ONLY, SESSION_ERRORS, uuid } from './common';

export const AgentBody = named(
  'Agent',
  z.looseObject({
    id: uuid,
    name: z.string(),
    kind: z.enum(AGENT_KINDS),
    is_order_handler: z.boolean(),
    endpoint_url: z.string().nullable().meta({ description: "A voice agent's endpoint" }),
    fallback_agent_id: uuid
      .nullable()
      .meta({ description: 'The agent that takes an order over when this one ends its operation with no-answer or failed (the ladder)' }),
    phone_number_id: z.string().optional().meta({ description: "WhatsApp agents: Meta's phone number id" }),
    template_name: z.string().optional().meta({ description: 'WhatsApp agents: the approved template sent' }),
    template_language: z.string().optional().meta({ description: "WhatsApp agents: the template's language code" }),
    reply_window_hours: z.number().int().optional().meta({ description: 'WhatsApp agents: how long we wait for a reply' }),
    callback_url: z.string().optional().meta({ description: "WhatsApp agents: the webhook URL to paste in Meta's dashboard" }),
    last_error: z.string().nullable().optional().meta({
      description: "WhatsApp agents: why its last message did not go out (Meta's error, a throttling answer, Meta unreachable, a failed status), or null",
    }),
    last_error_at: z.string().nullable().optional().meta({ description: 'WhatsApp agents: when that last error happened (ISO 8601), or null' }),
    verify_token: z
      .string()
      .optional()
      .meta({ description: "WhatsApp agents: the webhook's verify token, only in the answer of its creation (`no-store`) and on its page" }),
    created_at: instant,
    secret: z
      .string()
      .optional()
      .meta({ description: "A voice agent's signing secret: only in the answers of its creation and of a rotation (`Cache-Control: no-store`)" }),
  }),
);

const endpointUrl = z.string().optional().meta({ description: 'Voice agents only, required for them: a public https URL (`endpoint_url` accepted too)' });
const fallbackAgentId = uuid
  .nullable()
  .optional()
  .meta({ description: 'Another agent of the workspace (at most 3 agents in a ladder, no loop); required for a WhatsApp agent' });
const whatsappFields = {
  phoneNumberId: z.string().optional().meta({ description: 'WhatsApp agents (required): the phone number id (digits) from Meta’s app dashboard' }),
  accessToken: z
    .string()
    .optional()
    .meta({ description: "WhatsApp agents (required): a system user's permanent token with whatsapp_business_messaging; never shown again" }),
  appSecret: z.string().optional().meta({ description: "WhatsApp agents (required): the Meta app's secret, which signs Meta's webhooks; never shown again" }),
  templateName: z.string().optional().meta({ description: 'WhatsApp agents (required): the approved template' }),
  templateLanguage: z.string().optional().meta({ description: 'WhatsApp agents (required): fr, ar, en…' }),
  replyWindowHours: z.number().int().min(1).max(72).optional().meta({ description: 'WhatsApp agents: 1–72, default 4' }),
};
const agentInput = createSchema.extend({ endpointUrl, fallbackAgentId, ...whatsappFields });
const agentEdit = editSchema.extend({ endpointUrl, fallbackAgentId, ...whatsappFields });
const AGENT = {
  id: '3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9',
  name: 'Robot',
  kind: 'voice',
  is_order_handler: true,
  endpoint_url: 'https://agent.example.com/calls',
  fallback_agent_id: null,
  created_at: '2026-11-23T09:00:00.000Z',
};

export function register(b: OpenApiBuilder): void {
  b.tag(
    'Agents',
    "The workspace's agents (people and voice agents) and its order handler. Every member adds and edits human agents; voice agents (they send customer data out and hold a secret) are the workspace owner's: a member gets 403.",
  );
  b.add(
    {
      method: 'get',
      path: '/api/agents',
      tag: 'Agents',
      security: ['session'],
      summary: 'List the agents',
      responses: {
        200: { description: 'Oldest first', schema: z.looseObject({ agents: z.array(AgentBody) }), example: { agents: [AGENT] } },
        ...errors(SESSION_ERRORS),
      },
    },
    {
      method: 'post',
      path: '/api/agents',
      tag: 'Agents',
      security: ['session'],
      summary: 'Add an agent',
      description:
        '`orderHandler: true` makes it the order handler (the previous one is unset). `kind` is `human` (default), `voice` with an `endpointUrl`, or `whatsapp` with its Meta fields and a `fallbackAgentId` (the 201 carries `callback_url` and `verify_token`). Any agent may name a `fallbackAgentId`: a ladder has at most 3 agents and no loop (400 naming `fallbackAgentId`).',
      body: { schema: agentInput, example: { name: 'Robot', kind: 'voice', endpointUrl: 'https://agent.example.com/calls', orderHandler: true } },
      responses: {
        201: { description: 'The agent; a voice agent with its `secret`', schema: AgentBody, example: { ...AGENT, secret: 'whsec_…' } },
        ...errors(SESSION_ERRORS, BODY_ERRORS, {
          403: { description: 'Forbidden: a member adding a voice or WhatsApp agent (the owner alone does)', example: { error: 'Forbidden' } },
        }),
      },
    },
    {
      method: 'put',
      path: '/api/agents/{id}',
      tag: 'Agents',
      security: ['session'],
      summary: "Rename an agent, (un)set it as order handler, change a voice agent's endpoint",
      description: 'Every field but the kind, which never changes. For a WhatsApp agent, an absent or empty `accessToken` / `appSecret` keeps the stored one.',
      body: { schema: agentEdit, example: { orderHandler: true } },
      responses: {
        200: { description: 'The agent', schema: AgentBody, example: AGENT },
        ...errors(SESSION_ERRORS, BODY_ERRORS, NOT_FOUND('Agent'), {
          403: { description: 'Forbidden: a member editing a voice or WhatsApp agent (the owner alone does)', example: { error: 'Forbidden' } },
        }),
      },
    },
    {
      method: 'post',
      path: '/api/agents/{id}/rotate-secret',
      tag: 'Agents',
      security: ['session'],
      summary: "Rotate a voice agent's signing secret",
      description: 'The old secret stops working at once. A human agent is 404.',
      responses: {
        200: { description: 'The voice agent with its new `secret` (`no-store`)', schema: AgentBody, example: { ...AGENT, secret: 'whsec_…' } },
        ...errors(SESSION_ERRORS, OWNER_ONLY, NOT_FOUND('Agent')),
      },
    },
  );
}
