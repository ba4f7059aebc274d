import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { isOpen, nextOpening } from '../../services/calls';
import type { CallView } from '../../services/calls';
import { ConflictError, ValidationError, formatDecimal, shopDay } from '../../services/shared';
import { OUTCOMES } from '../../services/calls';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { languageOf } from '../middleware/i18n';
import { errorsByInput, formValues, redirectWithNotice, typedAmount } from './forms';
import type { FormState } from './forms';
import { formatDate, moroccoLocal, moroccoLocalToIso } from './view-helpers';

const OUTCOME_FIELDS = ['outcome', 'callback_at', 'changes', 'notes', 'total_amount', 'currency', 'rescheduled_for'] as const;
const FORM_FIELD: Record<string, string> = { callbackAt: 'callback_at', totalAmount: 'total_amount', rescheduledFor: 'rescheduled_for' };
const LABELS: Record<string, string> = { callbackAt: 'The callback time', changes: 'What changed', notes: 'Notes' };

/** The notice after an outcome, in the page's language: whose order, and what happens next. */
function outcomeNotice(req: Request, { call, operation, order }: CallView): string {
  const who = order.client_name;
  const next = operation.next_attempt_at
    ? req.t('calls.notice.nextCall', { at: formatDate(operation.next_attempt_at, languageOf(req)) })
    : req.t('calls.notice.noMoreCalls');
  return req.t(`calls.notice.${call.outcome ?? 'failed'}`, { who, next });
}

export function callPages(services: Services): Router {
  const router = Router();
  router.use('/calls', requirePageWorkspace);

  router.get('/calls', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    const [queue, settings, paused, myCall] = await Promise.all([
      services.calls.queue(workspace.id, user.id),
      services.callSettings.get(workspace.id),
      services.calls.pausedForCredits(workspace.id, workspace.owner_id),
      services.callViews.openCallOf(workspace.id, user.id),
    ]);
    const now = new Date();
    const open = isOpen(settings, now);
    res.render('calls/index', {
      due: queue.dueNow,
      waiting: queue.waiting,
      nextAt: queue.nextAt?.toISOString() ?? null,
      settings,
      open,
      opensAt: open ? null : nextOpening(settings, now).toISOString(),
      paused,
      myCall,
    });
  });

  router.post('/calls/next', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    // A call still open is where the member goes back to, said so (claimNext would answer it too).
    const mine = await services.callViews.openCallOf(workspace.id, user.id);
    if (mine) return redirectWithNotice(req, res, `/calls/${mine}`, req.t('calls.notice.resumed'));
    const claimed = await services.calls.claimNext(workspace.id, user.id);
    if (claimed) return res.redirect(303, `/calls/${claimed.call.id}`);
    const open = isOpen(await services.callSettings.get(workspace.id), new Date());
    await redirectWithNotice(req, res, '/calls', req.t(open ? 'calls.notice.noneDue' : 'calls.notice.hoursClosed'));
  });

  async function renderCall(req: Request, res: Response, status = 200, form: FormState = {}) {
    const { user, workspace } = workspaceOf(req);
    const page = await services.callViews.callPage(workspace.id, user.id, String(req.params.callId));
    const order = await services.orders.get(workspace.id, page.order_id);
    // A follow-up shows what the carrier said and the parcel's history.
    const deliveryEvents = page.follow_up ? await services.deliveries.events(workspace.id, order.id) : [];
    res.status(status).render('calls/show', {
      ...page,
      order,
      deliveryEvents,
      today: shopDay(),
      ...(await services.riskOf(workspace.id, order)),
      outcomes: OUTCOMES,
      minCallback: moroccoLocal(new Date()),
      values: form.values ?? {
        outcome: '',
        callback_at: '',
        changes: '',
        notes: '',
        // As the caller types it ("249,00" in French), as the order's edit form shows it.
        total_amount: order.total_amount ? formatDecimal(order.total_amount, languageOf(req)) : '',
        currency: order.currency ?? '',
        rescheduled_for: '',
      },
      errors: form.errors ?? {},
    });
  }

  router.get('/calls/:callId', (req, res) => renderCall(req, res));

  // One tap records the outcome and opens the next due call: each outcome is a submit button of one form.
  router.post('/calls/:callId/outcome', async (req, res) => {
    const { user, workspace } = workspaceOf(req);
    const values = formValues(req, OUTCOME_FIELDS);
    const typedCallback = values.callback_at.trim();
    if (typedCallback !== '' && values.outcome === 'no-answer') {
      // "No answer" would call again at the usual retry time: a typed time is not dropped in silence,
      // the member chooses "Call back later", or clears it. A final outcome (confirmed, declined, …)
      // plans no call, so a time left in the field means nothing for it and is ignored: the field
      // stays filled after this refusal, and must not refuse every outcome that follows.
      const errors = {
        callback_at: req.t('calls.errors.callbackOnlyLater', { outcome: req.t(`outcome.${values.outcome}`), later: req.t('outcome.postponed') }),
      };
      return renderCall(req, res, 400, { values, errors });
    }
    const callbackAt = values.outcome === 'postponed' && typedCallback !== '' ? (moroccoLocalToIso(typedCallback) ?? typedCallback) : undefined;
    if (callbackAt && callbackAt !== typedCallback) {
      // A time the calling hours do not include would be moved to their next opening: said, not done in silence.
      const settings = await services.callSettings.get(workspace.id);
      if (!isOpen(settings, new Date(callbackAt))) {
        const errors = { callback_at: req.t('calls.errors.callbackClosed', { start: settings.calling_hours.start, end: settings.calling_hours.end }) };
        return renderCall(req, res, 400, { values, errors });
      }
    }
    let result: CallView;
    try {
      result = await services.calls.recordHumanOutcome(
        workspace.id,
        user.id,
        String(req.params.callId),
        {
          outcome: values.outcome,
          callbackAt,
          changes: values.changes.trim() || null,
          notes: values.notes.trim() || null,
          totalAmount: typedAmount(values.total_amount),
          currency: values.currency.trim() || null,
          rescheduledFor: values.rescheduled_for.trim() || null,
        },
        user.name,
      );
    } catch (err) {
      if (err instanceof ConflictError && err.code === 'CALL_NOT_OPEN') {
        return redirectWithNotice(req, res, '/calls', req.t('calls.notice.noLongerYours'));
      }
      if (!(err instanceof ValidationError)) throw err;
      const errors = errorsByInput(err, FORM_FIELD, LABELS);
      if (errors.outcome) errors.outcome = req.t('calls.errors.outcome');
      if (errors.callback_at && callbackAt === typedCallback) errors.callback_at = req.t('calls.errors.dateTime');
      else if (errors.callback_at && !callbackAt) errors.callback_at = req.t('calls.errors.when');
      return renderCall(req, res, 400, { values, errors });
    }
    const notice = outcomeNotice(req, result);
    const next = await services.calls.claimNext(workspace.id, user.id);
    if (next) return redirectWithNotice(req, res, `/calls/${next.call.id}`, notice);
    const open = isOpen(await services.callSettings.get(workspace.id), new Date());
    await redirectWithNotice(req, res, '/calls', `${notice} ${req.t(open ? 'calls.notice.noneDue' : 'calls.notice.hoursClosed')}`);
  });
  return router;
}
