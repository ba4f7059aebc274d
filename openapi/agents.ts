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
    created_at: instant,
    secret: z
      .string()
      .optional()
      .meta({ description: "A voice agent's signing secret: only in the answers of its creation and of a rotation (`Cache-Control: no-store`)" }),
  }),
);

const endpointUrl = z.string().optional().meta({ description: 'Voice agents only, required for them: a public https URL (`endpoint_url` accepted too)' });
const agentInput = createSchema.extend({ endpointUrl });
const agentEdit = editSchema.extend({ endpointUrl });
const AGENT = {
  id: '3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9',
  name: 'Robot',
  kind: 'voice',
  is_order_handler: true,
  endpoint_url: 'https://agent.example.com/calls',
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
      description: '`orderHandler: true` makes it the order handler (the previous one is unset). `kind` is `human` (default) or `voice` with an `endpointUrl`.',
      body: { schema: agentInput, example: { name: 'Robot', kind: 'voice', endpointUrl: 'https://agent.example.com/calls', orderHandler: true } },
      responses: {
        201: { description: 'The agent; a voice agent with its `secret`', schema: AgentBody, example: { ...AGENT, secret: 'whsec_…' } },
        ...errors(SESSION_ERRORS, BODY_ERRORS, {
          403: { description: 'Forbidden: a member adding a voice agent (the owner alone does)', example: { error: 'Forbidden' } },
        }),
      },
    },
    {
      method: 'put',
      path: '/api/agents/{id}',
      tag: 'Agents',
      security: ['session'],
      summary: "Rename an agent, (un)set it as order handler, change a voice agent's endpoint",
      description: 'The kind of an agent never changes.',
      body: { schema: agentEdit, example: { orderHandler: true } },
      responses: {
        200: { description: 'The agent', schema: AgentBody, example: AGENT },
        ...errors(SESSION_ERRORS, BODY_ERRORS, NOT_FOUND('Agent'), {
          403: { description: 'Forbidden: a member editing a voice agent (the owner alone does)', example: { error: 'Forbidden' } },
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
