/**
 * WooCommerce's steps: its server posting the keys, then the owner back from WooCommerce, when the
 * three webhooks are made with our secret.
 */
import { z } from 'zod';
import { isUuid, readInboundJson } from '../../../../services/shared';
import type { WorkspaceActor } from '../../../../services/shared';
import { openedWriteBack, sealedWriteBack } from '../../records';
import { activate, afterState, discard, sha256, STATE_MINUTES, takeState } from '../../connect/approvals';
import type { Connector } from '../../connect/connector';
import { ConnectError } from '../../connect/connector';
import { idOf, jsonOf } from '../../connect/answers';
import { WOOCOMMERCE_TOPICS, wooWebhookCreate, wooWebhookDelete } from './api';

/** What WooCommerce shows the owner as the app asking for keys. */
export const APP_NAME = 'Order Confirmation';

/** What WooCommerce's server posts: the keys, and the nonce we gave it as `user_id`. */
const keysSchema = z.object({
  key_id: z.union([z.number(), z.string()]).optional(),
  user_id: z.union([z.string(), z.number()]).transform(String),
  consumer_key: z.string().min(1).max(500),
  consumer_secret: z.string().min(1).max(500),
  key_permissions: z.string().optional(),
});

/**
 * WooCommerce's server posts the keys here (no session: the `user_id` nonce is the only key).
 * Accepted once, for a live nonce naming this pending connection; kept on it until the owner is back.
 */
export async function wooKeys(connector: Connector, connectionId: string, raw: Buffer): Promise<boolean> {
  if (!isUuid(connectionId)) return false;
  // Keys holding text Postgres refuses (NUL, an unpaired surrogate) are no keys: refused like any other.
  const read = readInboundJson(raw);
  const parsed = read.ok ? keysSchema.safeParse(read.value) : undefined;
  if (!parsed?.success) return false;
  const body = parsed.data;
  const keys = JSON.stringify(sealedWriteBack(connector.secrets, { consumer_key: body.consumer_key, consumer_secret: body.consumer_secret }));
  const updated = await connector
    .knex('store_connections as c')
    .where({ 'c.id': connectionId, 'c.pending': true, 'c.kind': 'woocommerce' })
    .whereNull('c.write_back')
    .whereExists(
      connector
        .knex('oauth_states as s')
        .where({ 's.connection_id': connectionId, 's.nonce_hash': sha256(body.user_id) })
        .where('s.created_at', '>', connector.knex.raw(`now() - interval '${STATE_MINUTES} minutes'`)),
    )
    .update({ write_back: keys });
  return updated === 1;
}

/**
 * The owner back from WooCommerce (`success`, `user_id`): with the keys received, the three webhooks
 * are made with our secret; a refusal, missing keys or a failure leave nothing.
 */
export async function wooReturn(connector: Connector, workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
  const state = await takeState(connector.knex, 'woocommerce', sessionId, query.get('user_id'));
  return afterState(state, async () => {
    const id = state.connection_id;
    if (!id || state.workspace_id !== workspace.id) throw new ConnectError('state', 'woocommerce');
    const connection = await connector.knex('store_connections').where({ id, pending: true }).first('shop', 'secret', 'write_back');
    if (!connection) throw new ConnectError('state', 'woocommerce');
    if (query.get('success') !== '1') {
      await discard(connector.knex, id);
      throw new ConnectError('refused', 'woocommerce');
    }
    // Kept sealed (wooKeys): opened here to make the webhooks, stored as they are.
    const stored = connection.write_back as { consumer_key: string; consumer_secret: string } | null;
    const keys = stored && openedWriteBack(connector.secrets, stored);
    const secret = connector.secrets.open(connection.secret);
    if (!keys) {
      await discard(connector.knex, id);
      throw new ConnectError('keys', 'woocommerce');
    }
    const made: string[] = [];
    try {
      for (const topic of WOOCOMMERCE_TOPICS) {
        const answer = await connector.send(
          wooWebhookCreate(connection.shop, keys, {
            name: `${APP_NAME}: ${topic}`,
            topic,
            deliveryUrl: connector.url(`/hooks/stores/${id}`),
            secret,
          }),
        );
        const webhook = answer.delivered ? idOf(jsonOf(answer.body).id) : null;
        if (!webhook) throw new ConnectError('registration', 'woocommerce');
        made.push(webhook);
      }
    } catch (err) {
      await Promise.all(made.map((webhook) => connector.send(wooWebhookDelete(connection.shop, keys, webhook))));
      await discard(connector.knex, id);
      throw err;
    }
    await activate(connector.knex, id, { ...stored, set_status: false });
    return id;
  });
}
