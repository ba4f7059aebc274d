import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import type { CallSettings } from '../../services/calls';
import { DELIVERY_WORDS, builtInWords } from '../../services/deliveries';
import { RETENTION_MONTHS } from '../../services/orders';
import { ConflictError, isOwner, ValidationError } from '../../services/shared';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { createOnce, errorsByInput, formValues, pageMessage, redirectWithNotice } from './forms';
import type { FormState } from './forms';

const SETTINGS_FIELDS = ['max_attempts', 'retry_interval_minutes', 'hours_start', 'hours_end'] as const;
const FORM_FIELD: Record<string, string> = { maxAttempts: 'max_attempts', retryIntervalMinutes: 'retry_interval_minutes', callingHours: 'hours' };
const LABELS: Record<string, string> = { maxAttempts: 'Attempts', retryIntervalMinutes: 'The retry interval', callingHours: 'Calling hours' };

function formOf(settings: CallSettings): Record<string, string> {
  return {
    max_attempts: String(settings.max_attempts),
    retry_interval_minutes: String(settings.retry_interval_minutes),
    hours_start: settings.calling_hours.start,
    hours_end: settings.calling_hours.end,
  };
}

/** Whole numbers go to the service as numbers; anything else as typed, for the service to refuse. */
function numberOrText(input: string): number | string {
  const trimmed = input.trim();
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

export function settingsPages(services: Services): Router {
  const router = Router();
  router.use('/settings', requirePageWorkspace);
  const workspaceId = (req: Request) => workspaceOf(req).workspace.id;

  /** The page: the call settings form and the block list, either of them maybe coming back with errors. */
  async function renderSettings(
    req: Request,
    res: Response,
    status = 200,
    form: FormState = {},
    blockForm: FormState = {},
    wordForm: FormState = {},
    retentionForm: FormState = {},
  ) {
    const [settings, blocked, words, retention] = await Promise.all([
      services.callSettings.get(workspaceId(req)),
      services.blockedPhones.list(workspaceId(req)),
      services.deliveries.words.list(workspaceId(req)),
      services.retention.get(workspaceId(req)),
    ]);
    res.status(status).render('settings', {
      isOwner: isOwner(workspaceOf(req).workspace),
      retentionLimits: RETENTION_MONTHS,
      retentionValues: retentionForm.values ?? { retention_months: String(retention.retention_months) },
      retentionErrors: retentionForm.errors ?? {},
      words,
      builtInWords: builtInWords(),
      deliveryWords: DELIVERY_WORDS,
      wordValues: wordForm.values ?? { word: '', status: 'delivered' },
      wordErrors: wordForm.errors ?? {},
      values: form.values ?? formOf(settings),
      errors: form.errors ?? {},
      blocked,
      blockValues: blockForm.values ?? { phone: '', reason: '' },
      blockErrors: blockForm.errors ?? {},
    });
  }

  router.get('/settings', (req, res) => renderSettings(req, res));

  // The whole form is sent every time: PUT semantics over a plain form post.
  router.post('/settings', async (req, res) => {
    const values = formValues(req, SETTINGS_FIELDS);
    try {
      await services.callSettings.update(workspaceId(req), {
        maxAttempts: numberOrText(values.max_attempts),
        retryIntervalMinutes: numberOrText(values.retry_interval_minutes),
        callingHours: { start: values.hours_start.trim(), end: values.hours_end.trim() },
      });
      await redirectWithNotice(req, res, '/settings', req.t('settingsPage.notice.saved'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderSettings(req, res, 400, { values, errors: errorsByInput(err, FORM_FIELD, LABELS) });
    }
  });

  // How long customers' details are kept: the owner's (a member gets 403, as on the API).
  router.post('/settings/retention', async (req, res) => {
    const values = formValues(req, ['retention_months']);
    try {
      await services.retention.update(workspaceOf(req).workspace, { retentionMonths: numberOrText(values.retention_months) });
      await redirectWithNotice(req, res, '/settings#retention-heading', req.t('retentionPage.saved', { months: values.retention_months.trim() }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderSettings(
        req,
        res,
        400,
        {},
        {},
        {},
        { values, errors: errorsByInput(err, { retentionMonths: 'retention_months' }, { retentionMonths: 'The retention period' }) },
      );
    }
  });

  router.post('/settings/blocked-phones', async (req, res) => {
    const values = formValues(req, ['phone', 'reason']);
    try {
      const entry = await createOnce(req, res, services.formTokens, 'blocked-phone', '/settings', (db) =>
        services.blockedPhones.add(workspaceId(req), values, db),
      );
      if (!entry) return;
      await redirectWithNotice(req, res, '/settings', req.t('settingsPage.notice.blocked', { phone: entry.phone }));
    } catch (err) {
      if (err instanceof ConflictError) return renderSettings(req, res, 409, {}, { values, errors: { phone: pageMessage(err) } });
      if (!(err instanceof ValidationError)) throw err;
      await renderSettings(req, res, 400, {}, { values, errors: errorsByInput(err) });
    }
  });

  router.post('/settings/blocked-phones/delete', async (req, res) => {
    const { phone } = formValues(req, ['phone']);
    await services.blockedPhones.remove(workspaceId(req), phone);
    await redirectWithNotice(req, res, '/settings', req.t('settingsPage.notice.unblocked', { phone }));
  });
  router.post('/settings/carrier-words', async (req, res) => {
    const values = formValues(req, ['word', 'status']);
    try {
      await services.deliveries.words.add(workspaceId(req), values);
      await redirectWithNotice(req, res, '/settings#words-heading', req.t('words.added', { word: values.word.trim() }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await renderSettings(req, res, 400, {}, {}, { values, errors: errorsByInput(err) });
    }
  });

  router.post('/settings/carrier-words/delete', async (req, res) => {
    const { word } = formValues(req, ['word']);
    await services.deliveries.words.remove(workspaceId(req), word);
    await redirectWithNotice(req, res, '/settings#words-heading', req.t('words.removed', { word }));
  });
  return router;
}
