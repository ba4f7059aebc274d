import type { DeliveryResult, OutboundRequest } from '../../integrations/http';
import { formatMoney } from '../../services/shared';

/** What a template message is built from: the order, its store, the call and the agent's template. */
export interface MessageContext {
  call_id: string;
  phone: string;
  client_name: string | null;
  products_name: string | null;
  total_amount: string | number | null;
  currency: string | null;
  store_name: string | null;
  external_ref: string | null;
  phone_number_id: string;
  access_token: string;
  template_name: string;
  template_language: string;
}

/**
 * How Meta's answer to a send reads: sent (with the message's wamid), refused for good, to try again
 * (Meta or the network down), or throttled (Meta says "later": tried again, never a refusal).
 */
export type SendAnswer =
  | { result: 'sent'; messageId: string }
  | { result: 'refused'; message: string }
  | { result: 'retry'; reason: string }
  | { result: 'throttled'; message: string; scope: 'number' | 'pair' };

/**
 * Meta's throttling codes, which come as HTTP 400 but mean "later": 130429 (the number's throughput,
 * "Rate limit hit"), 131056 (too many messages to one customer, "pair rate limit"), 131048 ("Spam
 * rate limit hit": limits on the number for now) and 80007 (the business account's rate limit).
 * See developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes.
 */
const THROTTLING_CODES: ReadonlySet<number> = new Set([130429, 131056, 131048, 80007]);

/** Meta's error messages are kept as a call's summary, at most this long. */
const MAX_ERROR_MESSAGE = 200;

/**
 * A template parameter: Meta refuses new lines, tabs and runs of spaces in one, and an empty one;
 * what we do not have is sent as `-`.
 */
function parameter(value: string | null | undefined): { type: 'text'; text: string } {
  const text = (value ?? '').replace(/\s+/g, ' ').trim();
  return { type: 'text', text: text === '' ? '-' : text.slice(0, 1000) };
}

/** The amount to collect as the customer reads it in the template's language ("349,00 MAD"). */
function amount(value: string | number | null, currency: string | null, language: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  const base = language.slice(0, 2);
  // Written as the dashboard writes amounts (services/shared/numbers.ts): "1 250,00" in French.
  const number = formatMoney(value, base === 'fr' || base === 'ar' ? base : 'en');
  return currency ? `${number} ${currency}` : number;
}

/**
 * The Cloud API request that sends the agent's approved template to the customer: the body
 * parameters in the order the template was submitted with (client name, products, amount to
 * collect, store name, order reference), and the two quick-reply buttons carrying the call's id.
 */
export function templateRequest(origin: string, version: string, ctx: MessageContext): OutboundRequest {
  const body = {
    messaging_product: 'whatsapp',
    to: ctx.phone.replace(/^\+/, ''),
    type: 'template',
    template: {
      name: ctx.template_name,
      language: { code: ctx.template_language },
      components: [
        {
          type: 'body',
          parameters: [
            parameter(ctx.client_name),
            parameter(ctx.products_name),
            parameter(amount(ctx.total_amount, ctx.currency, ctx.template_language)),
            parameter(ctx.store_name),
            parameter(ctx.external_ref),
          ],
        },
        { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: `confirm:${ctx.call_id}` }] },
        { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: `cancel:${ctx.call_id}` }] },
      ],
    },
  };
  return {
    method: 'POST',
    url: `${origin}/${version}/${encodeURIComponent(ctx.phone_number_id)}/messages`,
    headers: { authorization: `Bearer ${ctx.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Reads Meta's answer: a 2xx carries `messages[0].id`; a 4xx is Meta refusing the message (a bad
 * token, a template not approved, a number not on WhatsApp), kept with Meta's `error.message`, but
 * an HTTP 429 or a 400 with a throttling code is "later"; a 5xx, a time-out or a refused connection
 * is worth another try.
 */
export function readSendAnswer(result: DeliveryResult): SendAnswer {
  const body = json(result.body) as { messages?: Array<{ id?: unknown }>; error?: { message?: unknown; code?: unknown } } | undefined;
  if (result.delivered) {
    const id = body?.messages?.[0]?.id;
    if (typeof id === 'string' && id.length > 0 && id.length <= 256) return { result: 'sent', messageId: id };
    return { result: 'refused', message: 'Meta accepted the message without giving its id' };
  }
  if (result.status !== null && result.status >= 400 && result.status < 500) {
    const given = typeof body?.error?.message === 'string' && body.error.message.trim() !== '' ? body.error.message : `HTTP ${result.status}`;
    const message = given.replaceAll('\u0000', '').slice(0, MAX_ERROR_MESSAGE);
    const code = Number(body?.error?.code);
    // 131056 limits the messages to one customer; the others (and a 429) the number, its account or the app.
    if (result.status === 429 || THROTTLING_CODES.has(code)) return { result: 'throttled', message, scope: code === 131056 ? 'pair' : 'number' };
    return { result: 'refused', message };
  }
  return { result: 'retry', reason: result.error ?? `HTTP ${result.status}` };
}
