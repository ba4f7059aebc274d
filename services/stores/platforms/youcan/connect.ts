/** YouCan's step: its OAuth callback (the state checked, the token, the webhook subscriptions). */
import type { WorkspaceActor } from '../../../../services/shared';
import { activate, afterState, discard, pendingConnection, takeState } from '../../connect/approvals';
import type { Connector } from '../../connect/connector';
import { ConnectError } from '../../connect/connector';
import { idOf, jsonOf } from '../../connect/answers';
import { YOUCAN_API, YOUCAN_EVENTS, youcanSubscribe, youcanTokenRequest, youcanUnsubscribe } from './api';

/** YouCan's callback (`code`, `state`, or `error` when the owner refused). */
export async function youcanCallback(connector: Connector, workspace: WorkspaceActor, sessionId: string, query: URLSearchParams): Promise<string> {
  const app = connector.config.youcanApp;
  if (!app) throw new ConnectError('not_configured', 'youcan');
  const state = await takeState(connector.knex, 'youcan', sessionId, query.get('state'));
  return afterState(state, async () => {
    if (state.workspace_id !== workspace.id) throw new ConnectError('state', 'youcan');
    if (query.get('error') || !query.get('code')) throw new ConnectError('refused', 'youcan');
    const api = connector.config.youcanApiOrigin ?? YOUCAN_API;
    const grant = await connector.send(youcanTokenRequest(api, app, connector.url('/stores/youcan/callback'), query.get('code')!));
    const token = idOf(jsonOf(grant.body).access_token);
    if (!grant.delivered || !token) throw new ConnectError('platform', 'youcan');
    const id = await pendingConnection(connector.knex, state, 'youcan', connector.secrets.seal(app.clientSecret));
    const made: string[] = [];
    try {
      for (const event of YOUCAN_EVENTS) {
        const answer = await connector.send(youcanSubscribe(api, token, event, connector.url(`/hooks/stores/${id}`)));
        // order.update is taken where YouCan offers it: a refusal of it alone (4xx) is not a failure.
        if (!answer.delivered && event === 'order.update' && answer.status !== null && answer.status >= 400 && answer.status < 500) continue;
        const subscription = answer.delivered ? idOf(jsonOf(answer.body).id) : null;
        if (!subscription) throw new ConnectError('registration', 'youcan');
        made.push(subscription);
      }
    } catch (err) {
      await Promise.all(made.map((sub) => connector.send(youcanUnsubscribe(api, token, sub))));
      await discard(connector.knex, id);
      throw err;
    }
    await activate(connector.knex, id, null);
    return id;
  });
}
