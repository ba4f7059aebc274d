import crypto from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** A message id, the same on every retry of one message. */
export function newMessageId(): string {
  return `msg_${crypto.randomUUID().replace(/-/g, '')}`;
}

/** The three headers of a signed message (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
export function signedHeaders(secret: string, messageId: string, body: string | Buffer, at = new Date()): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}

/**
 * True when the raw body carries a valid signature by `secret` and a timestamp within 5 minutes of
 * our clock (the library's tolerance). Comparison is constant-time inside the library.
 */
export function verifySignature(secret: string, rawBody: Buffer, headers: Record<string, string | string[] | undefined>): boolean {
  const pick = (name: string) => {
    const value = headers[name];
    return typeof value === 'string' ? value : '';
  };
  try {
    new Webhook(secret).verify(
      rawBody,
      {
        'webhook-id': pick('webhook-id'),
        'webhook-timestamp': pick('webhook-timestamp'),
        'webhook-signature': pick('webhook-signature'),
      },
      { jsonParse: false },
    );
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    // A malformed secret or header makes the library throw other errors: still "not verified".
    return false;
  }
}
