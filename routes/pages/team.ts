import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { ASSIGNMENTS } from '../../services/team';
import { isOwner, ValidationError } from '../../services/shared';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { errorsByInput, formValues, localPath, redirectWithNotice, typedAmount } from './forms';
import type { FormState } from './forms';

const SETTINGS_FIELDS = ['assignment', 'reserve_minutes', 'follow_ups', 'currency'] as const;
const TERMS_FIELDS = ['share', 'fixed', 'per_confirmed', 'per_delivered'] as const;
const SETTINGS_INPUTS: Record<string, string> = { reserveMinutes: 'reserve_minutes', followUps: 'follow_ups' };
const TERMS_INPUTS: Record<string, string> = { perConfirmed: 'per_confirmed', perDelivered: 'per_delivered' };

/** The shift toggle of every page, and /team: who is on shift, how orders are assigned, each member's share and pay, each store's confirmers. */
export function teamPages(services: Services): Router {
  const router = Router();

  // One tap in the navigation: on or off shift, then back to the page it was tapped on.
  router.post('/shift', requirePageWorkspace, async (req, res) => {
    const { workspace, user } = workspaceOf(req);
    const on = req.body?.on === 'true';
    await services.team.shifts.set(workspace.id, user.id, on);
    await redirectWithNotice(req, res, localPath(req.body?.back) ?? '/calls', req.t(on ? 'team.shift.nowOn' : 'team.shift.nowOff'));
  });

  async function render(
    req: Request,
    res: Response,
    status = 200,
    forms: { settings?: FormState; terms?: FormState & { userId?: string }; store?: FormState } = {},
  ) {
    const id = workspaceOf(req).workspace.id;
    const [team, settings, members, stores] = await Promise.all([
      services.team.shifts.team(id),
      services.team.settings.get(id),
      services.team.settings.members(id),
      services.team.settings.stores(id),
    ]);
    res.status(status).render('team', {
      isOwner: isOwner(workspaceOf(req).workspace),
      team,
      assignments: ASSIGNMENTS,
      settings,
      members,
      stores,
      values: forms.settings?.values ?? {
        assignment: settings.assignment,
        reserve_minutes: String(settings.reserve_minutes),
        follow_ups: settings.follow_ups ? 'on' : '',
        currency: settings.currency,
      },
      errors: forms.settings?.errors ?? {},
      termsFor: forms.terms?.userId ?? null,
      termsValues: forms.terms?.values ?? {},
      termsErrors: forms.terms?.errors ?? {},
      storeValues: forms.store?.values ?? { store_name: '' },
      storeErrors: forms.store?.errors ?? {},
    });
  }

  router.get('/team', requirePageWorkspace, (req, res) => render(req, res));

  router.post('/team/settings', requirePageWorkspace, async (req, res) => {
    const values = formValues(req, SETTINGS_FIELDS);
    try {
      await services.team.settings.update(workspaceOf(req).workspace, {
        assignment: values.assignment,
        reserveMinutes: values.reserve_minutes.trim(),
        followUps: values.follow_ups === 'on',
        currency: values.currency,
      });
      await redirectWithNotice(req, res, '/team', req.t('team.saved'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await render(req, res, 400, { settings: { values, errors: errorsByInput(err, SETTINGS_INPUTS) } });
    }
  });

  router.post('/team/members/:userId', requirePageWorkspace, async (req, res) => {
    const values = formValues(req, TERMS_FIELDS);
    try {
      await services.team.settings.setTerms(workspaceOf(req).workspace, String(req.params.userId), {
        share: values.share.trim(),
        fixed: typedAmount(values.fixed) ?? '',
        perConfirmed: typedAmount(values.per_confirmed) ?? '',
        perDelivered: typedAmount(values.per_delivered) ?? '',
      });
      await redirectWithNotice(req, res, '/team', req.t('team.saved'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await render(req, res, 400, { terms: { userId: String(req.params.userId), values, errors: errorsByInput(err, TERMS_INPUTS) } });
    }
  });

  router.post('/team/stores', requirePageWorkspace, async (req, res) => {
    const values = formValues(req, ['store_name']);
    const given = req.body?.user_ids;
    const userIds = Array.isArray(given) ? given : typeof given === 'string' ? [given] : [];
    try {
      await services.team.settings.setStore(workspaceOf(req).workspace, { storeName: values.store_name, userIds });
      await redirectWithNotice(req, res, '/team', req.t('team.saved'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await render(req, res, 400, { store: { values, errors: errorsByInput(err, { storeName: 'store_name', userIds: 'user_ids' }) } });
    }
  });
  return router;
}
