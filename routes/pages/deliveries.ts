import { Router } from 'express';
import type { Request, Response } from 'express';
import multer from 'multer';
import type { Services } from '../../services';
import { DELIVERY_WORDS, REPORT_COLUMNS, unknownRowsFrom } from '../../services/deliveries';
import { AppError, isOwner, recode, ValidationError } from '../../services/shared';
import { IMPORT_MAX_ROWS } from '../../services/orders';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { logFault } from '../middleware/errors';
import { errorsByInput, formValues, redirectWithNotice } from './forms';
import { translateMessage } from './view-helpers';

/** /deliveries/import: a carrier's report in, what changed, what matched no order and which words were unknown out. */
export function deliveryPages(services: Services): Router {
  const router = Router();
  router.use('/deliveries', requirePageWorkspace);

  const render = (res: Response, status: number, locals: Record<string, unknown> = {}) =>
    res.status(status).render('deliveries/import', {
      columns: REPORT_COLUMNS,
      maxRows: IMPORT_MAX_ROWS,
      deliveryWords: DELIVERY_WORDS,
      error: null,
      result: null,
      carrier: '',
      fileName: '',
      ...locals,
    });

  /** The hub: the report import, the carrier connections (made by the owner), the statistics. */
  async function renderHub(req: Request, res: Response, status = 200, extra: Record<string, unknown> = {}) {
    const { workspace } = workspaceOf(req);
    res.status(status).render('deliveries/index', {
      carriers: await services.deliveries.carriers.list(workspace.id),
      isOwner: isOwner(workspace),
      created: null,
      values: { name: '' },
      errors: {},
      ...extra,
    });
  }
  router.get('/deliveries', (req, res) => renderHub(req, res));
  router.post('/deliveries/carriers', async (req, res) => {
    const values = formValues(req, ['name']);
    try {
      // The secret is shown once, on this answer: never kept in the session for a redirect.
      const created = await services.deliveries.carriers.create(workspaceOf(req).workspace, { kind: 'custom', name: values.name });
      await renderHub(req, res, 201, { created });
    } catch (err) {
      if (err instanceof ValidationError) return renderHub(req, res, 400, { values, errors: errorsByInput(err) });
      throw err;
    }
  });
  router.post('/deliveries/carriers/:id/delete', async (req, res) => {
    await services.deliveries.carriers.remove(workspaceOf(req).workspace, String(req.params.id));
    await redirectWithNotice(req, res, '/deliveries', req.t('carriers.removed'));
  });

  router.get('/deliveries/import', (_req, res) => render(res, 200));

  router.post('/deliveries/import', async (req, res) => {
    const carrier = typeof req.body?.carrier === 'string' ? req.body.carrier.trim().slice(0, 100) : '';
    if (res.locals.uploadError) {
      const tooLarge = res.locals.uploadError instanceof multer.MulterError && res.locals.uploadError.code === 'LIMIT_FILE_SIZE';
      return render(res, tooLarge ? 413 : 400, { carrier, error: req.t(tooLarge ? 'report.tooLarge' : 'report.unreadable') });
    }
    if (!req.file || req.file.size === 0) return render(res, 400, { carrier, error: req.t('importPage.chooseFile') });
    const fileName = (req.file.originalname || 'report').slice(0, 200);
    try {
      const result = await services.deliveries.reports.run(workspaceOf(req).workspace.id, req.file.buffer, { fileName, carrier: carrier || null });
      render(res, 200, { carrier, result, fileName });
    } catch (err) {
      if (err instanceof ValidationError) {
        const translate: (text: string) => string = res.locals.message;
        return render(res, 400, { carrier, error: req.t('report.refused', { details: Object.values(err.fields).map(translate).join(' ') }) });
      }
      // In the page's language: a file too large, too many rows, cells or work.
      if (err instanceof AppError && err.status < 500) return render(res, err.status, { carrier, error: translateMessage(req.t, recode(err.page)) });
      // A batch the database refused: the page says which lines are applied, in its language; the fault is logged.
      if (err instanceof AppError && err.code === 'REPORT_INTERRUPTED') {
        logFault(err, req.log);
        return render(res, err.status, { carrier, error: translateMessage(req.t, recode(err.page)) });
      }
      throw err;
    }
  });

  /**
   * The result page's answer to its unknown words: each word given a meaning is saved to the shop's
   * words (as /settings does, members too), then the rows of those words the page carried are
   * applied; the page shows what that changed.
   */
  router.post('/deliveries/import/words', async (req, res) => {
    const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);
    const statuses = list(req.body?.status);
    const answered = list(req.body?.word)
      .map((word, i) => ({ word, status: statuses[i] }))
      .filter((entry) => typeof entry.status === 'string' && entry.status !== '');
    const fileName = (typeof req.body?.file_name === 'string' && req.body.file_name.trim()) || 'report';
    const workspaceId = workspaceOf(req).workspace.id;
    const rows = unknownRowsFrom(req.body?.row);
    try {
      await services.deliveries.words.addAll(workspaceId, answered);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(res, 400, { error: req.t('report.wordsRefused') });
    }
    const result = rows.length > 0 ? await services.deliveries.reports.reapply(workspaceId, rows, fileName.slice(0, 200)) : null;
    const notice = answered.length > 0 ? req.t('report.wordsSaved', { count: answered.length }) : req.t('report.wordsNone');
    render(res, answered.length > 0 ? 200 : 400, { result, fileName, notice, reapplied: result !== null });
  });
  return router;
}
