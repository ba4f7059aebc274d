import { Router } from 'express';
import { doNotCompress } from '../middleware/compression';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import type { ApiKeyView } from '../../services/accounts';
import { ValidationError } from '../../services/shared';
import { keyViewer, requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { createOnce, errorsByInput, formValues, redirectWithNotice } from './forms';
import type { FormState } from './forms';

const KEY_FIELDS = ['name', 'expires_in_days'] as const;
const FORM_FIELD: Record<string, string> = { expiresInDays: 'expires_in_days' };

type KeyState = 'active' | 'expired' | 'revoked';

function stateOf(key: ApiKeyView, now: number): KeyState {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

/** Empty means "never expires"; anything else goes to the service as a number, which checks it. */
function expiresInDays(input: string): number | undefined {
  const trimmed = input.trim();
  return trimmed === '' ? undefined : Number(trimmed);
}

export function apiKeyPages(services: Services): Router {
  const router = Router();
  router.use('/api-keys', requirePageWorkspace);

  async function renderKeys(req: Request, res: Response, status = 200, form: FormState = {}, newKey: { name: string; key: string } | null = null) {
    const now = Date.now();
    const keys = (await services.apiKeys.list(keyViewer(req))).map((key) => ({ ...key, state: stateOf(key, now) }));
    res.status(status).render('api-keys', { keys, newKey, values: form.values ?? {}, errors: form.errors ?? {} });
  }

  router.get('/api-keys', (req, res) => renderKeys(req, res));

  router.post('/api-keys', async (req, res) => {
    const values = formValues(req, KEY_FIELDS);
    const { user, workspace } = workspaceOf(req);
    try {
      const created = await createOnce(req, res, services.formTokens, 'api-key', '/api-keys', (db) =>
        services.apiKeys.create(
          { userId: user.id, workspaceId: workspace.id },
          { name: values.name, expiresInDays: expiresInDays(values.expires_in_days) },
          db,
        ),
      );
      if (!created) return;
      // The full key is in this response only: never in the session, a URL, or a cache.
      res.set('Cache-Control', 'no-store');
      doNotCompress(res);
      res.locals.notice = req.t('apiKeysPage.notice.created');
      await renderKeys(req, res, 201, {}, { name: created.name, key: created.key });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderKeys(req, res, 400, { values, errors: errorsByInput(err, FORM_FIELD) });
    }
  });

  router.post('/api-keys/:id/revoke', async (req, res) => {
    await services.apiKeys.revoke(keyViewer(req), String(req.params.id));
    await redirectWithNotice(req, res, '/api-keys', req.t('apiKeysPage.notice.revoked'));
  });
  return router;
}
