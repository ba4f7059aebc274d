import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { ConflictError, isOwner, ValidationError } from '../../services/shared';
import { CONNECT_ERRORS, CONNECT_KINDS, ConnectError, STORE_KINDS, STORE_PLATFORMS, storePlatform } from '../../services/stores';
import type { ConnectKind, StoreConnection } from '../../services/stores';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';
import { createOnce, errorsByInput, formValues, pageMessage, redirectWithNotice } from './forms';
import type { FormState } from './forms';

const FORM_FIELDS = ['kind', 'name', 'shop', 'secret', 'cod_only'] as const;

/** Each kind's name in the page's language. */
const kindLabels = (req: Request) => Object.fromEntries(STORE_KINDS.map((kind) => [kind, req.t(`storesPage.kind.${kind}`)]));
/** The form's labels, put in place of the field's API name at the start of a service's message. */
const labelsOf = (kind: string) => ({ name: 'Name', shop: storePlatform(kind)?.address?.apiLabel ?? 'Site address', secret: 'Signing key' });
/**
 * A kind no platform has (a forged form, shown again with its errors): the manual form asking for a
 * signing key, and the guide of the last platform, the catch-all (a sender of our own body).
 */
const UNKNOWN_PLATFORM = { manual: true, signingKey: 'store', guide: { ...STORE_PLATFORMS[STORE_PLATFORMS.length - 1].guide, heading: undefined } };
/** What the pages show of a kind's platform: its form's fields, its one-click words, its guide. */
const platformOf = (kind: string) => storePlatform(kind) ?? UNKNOWN_PLATFORM;

/** The platform's query string as it came (Shopify's hmac is computed over its parameters as given). */
function queryOf(req: Request): URLSearchParams {
  const at = req.originalUrl.indexOf('?');
  return new URLSearchParams(at === -1 ? '' : req.originalUrl.slice(at + 1));
}

/** A form's text as the service's body: empty fields left out, the box as a boolean. */
function bodyOf(values: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of ['kind', 'name', 'shop', 'secret'] as const) if (values[name]?.trim()) body[name] = values[name];
  body.cod_only = values.cod_only === 'true';
  return body;
}

/** /stores: the workspace's store connections, adding one with its kind's guide, and each one's event log. */
export function storePages(services: Services): Router {
  const router = Router();
  router.use('/stores', requirePageWorkspace);
  const workspace = (req: Request) => workspaceOf(req).workspace;

  /** A value typed on the one-click form, given back in the query after a failed approval (shown escaped in its field). */
  const typedBack = (value: unknown, max: number) => (typeof value === 'string' && value.length <= max ? value : '');

  function renderNew(req: Request, res: Response, status = 200, form: FormState = {}, connectForm: FormState = {}) {
    const given = connectForm.values?.kind ?? form.values?.kind ?? req.query.kind;
    const kind = typeof given === 'string' && (STORE_KINDS as readonly string[]).includes(given) ? given : STORE_KINDS[0];
    const error =
      typeof req.query.connect_error === 'string' && (CONNECT_ERRORS as readonly string[]).includes(req.query.connect_error) ? req.query.connect_error : null;
    res.status(status).render('stores/new', {
      kinds: STORE_KINDS,
      platformOf,
      kindLabels: kindLabels(req),
      isOwner: isOwner(workspace(req)),
      values: form.values ?? { kind, name: '', shop: '', secret: '', cod_only: 'true' },
      errors: form.errors ?? {},
      // One click for the platforms: whether the operator set up its app, and why the last try failed.
      connect: (CONNECT_KINDS as readonly string[]).includes(kind) ? { available: services.storeConnect.available()[kind as ConnectKind], error } : null,
      connectValues: connectForm.values ?? { name: typedBack(req.query.name, 120), shop: typedBack(req.query.shop, 300), cod_only: 'true' },
      connectErrors: connectForm.errors ?? {},
    });
  }

  /** Where the owner lands after a platform's approval: their connection, or the form with the reason. */
  async function afterApproval(req: Request, res: Response, kind: ConnectKind, connect: () => Promise<string>) {
    try {
      const id = await connect();
      await redirectWithNotice(req, res, `/stores/${id}`, req.t('storeConnect.connected', { kind: req.t(`storesPage.kind.${kind}`) }));
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      // A Reconnect that failed: back to that connection's page, with the reason.
      if (err.reconnecting) return res.redirect(303, `/stores/${err.reconnecting}?connect_error=${err.code}`);
      // What the owner typed comes back with the reason, so that trying again is one press.
      const typed = err.typed ? `&${new URLSearchParams({ name: err.typed.name, shop: err.typed.shop ?? '' })}` : '';
      res.redirect(303, `/stores/new?kind=${err.kind}&connect_error=${err.code}${typed}`);
    }
  }

  async function renderStore(req: Request, res: Response, store: StoreConnection, secret: string | null = null) {
    if (secret) secretAnswer(res);
    res.render('stores/show', {
      store,
      platformOf,
      secret,
      kindLabels: kindLabels(req),
      isOwner: isOwner(workspace(req)),
      events: await services.stores.eventLog(workspace(req).id, store.id),
      // Why the last Reconnect failed, when it did.
      connectError:
        typeof req.query.connect_error === 'string' && (CONNECT_ERRORS as readonly string[]).includes(req.query.connect_error) ? req.query.connect_error : null,
      writeBackError: await services.stores.writeBackError(workspace(req).id, store.id),
    });
  }

  router.get('/stores', async (req, res) => {
    res.render('stores/index', { stores: await services.stores.list(workspace(req).id), kindLabels: kindLabels(req), isOwner: isOwner(workspace(req)) });
  });

  router.get('/stores/new', (req, res) => renderNew(req, res));

  // One click: the owner's form sends their browser to the platform to approve.
  router.post('/stores/connect', async (req, res) => {
    const values = formValues(req, ['kind', 'name', 'shop', 'cod_only'] as const);
    const body = { kind: values.kind, name: values.name, shop: values.shop || undefined, cod_only: values.cod_only === 'true' };
    try {
      const url = await services.storeConnect.start(workspace(req), req.sessionID, body);
      // Not a redirect: the form's page allows form submissions to our own address only (CSP
      // form-action), which a redirect to the platform would break. The Refresh header goes on.
      res.set('Refresh', `0; url=${url}`).render('stores/connect-go', { url, kindLabel: req.t(`storesPage.kind.${body.kind}`) });
    } catch (err) {
      if (err instanceof ConnectError) return res.redirect(303, `/stores/new?kind=${err.kind}&connect_error=${err.code}`);
      if (err instanceof ConflictError) return renderNew(req, res, 409, {}, { values, errors: { form: pageMessage(err) } });
      if (!(err instanceof ValidationError)) throw err;
      renderNew(req, res, 400, {}, { values, errors: errorsByInput(err, {}, labelsOf(values.kind)) });
    }
  });
  // Each platform sends the owner back to its own page (`/stores/shopify/callback`, `/stores/woocommerce/return`…).
  for (const kind of CONNECT_KINDS) {
    const back = storePlatform(kind)!.connect!.back;
    router.get(`/stores/${kind}/${back}`, (req, res) =>
      afterApproval(req, res, kind, () => services.storeConnect.finish(kind, workspace(req), req.sessionID, queryOf(req))),
    );
  }

  router.post('/stores', async (req, res) => {
    const values = formValues(req, FORM_FIELDS);
    try {
      const created = await createOnce(req, res, services.formTokens, 'store', '/stores', (db) => services.stores.create(workspace(req), bodyOf(values), db));
      if (!created) return;
      // The key we made is shown on this answer alone: no redirect, which would lose it.
      await renderStore(req, res, created, created.secret ?? null);
    } catch (err) {
      if (err instanceof ConflictError) return renderNew(req, res, 409, { values, errors: { form: pageMessage(err) } });
      if (!(err instanceof ValidationError)) throw err;
      renderNew(req, res, 400, { values, errors: errorsByInput(err, {}, labelsOf(values.kind)) });
    }
  });

  router.get('/stores/:id', async (req, res) => {
    await renderStore(req, res, await services.stores.get(workspace(req).id, String(req.params.id)));
  });

  // Reconnect: the platform's approval again for the connection's own shop; its tokens are replaced, its id and orders stay.
  router.post('/stores/:id/reconnect', async (req, res) => {
    try {
      const { url, kind } = await services.storeConnect.reconnect(workspace(req), req.sessionID, String(req.params.id));
      res.set('Refresh', `0; url=${url}`).render('stores/connect-go', { url, kindLabel: req.t(`storesPage.kind.${kind}`) });
    } catch (err) {
      if (err instanceof ConnectError && err.reconnecting) return res.redirect(303, `/stores/${err.reconnecting}?connect_error=${err.code}`);
      throw err;
    }
  });

  router.post('/stores/:id/enabled', async (req, res) => {
    const enabled = formValues(req, ['enabled'] as const).enabled === 'true';
    await services.stores.update(workspace(req), String(req.params.id), { enabled });
    await redirectWithNotice(req, res, `/stores/${req.params.id}`, req.t(enabled ? 'storePage.noticeEnabled' : 'storePage.noticeDisabled'));
  });

  router.get('/stores/:id/delete', async (req, res) => {
    res.render('stores/delete', { store: await services.stores.get(workspace(req).id, String(req.params.id)), isOwner: isOwner(workspace(req)) });
  });

  router.post('/stores/:id/delete', async (req, res) => {
    const store = await services.stores.get(workspace(req).id, String(req.params.id));
    await services.stores.remove(workspace(req), store.id);
    await redirectWithNotice(req, res, '/stores', req.t('storeDelete.notice', { name: res.locals.isolate(store.name) }));
  });
  return router;
}
