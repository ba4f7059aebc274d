import { Router } from 'express';
import type { Response } from 'express';
import multer from 'multer';
import type { Services } from '../../services';
import { REPORT_COLUMNS } from '../../services/deliveries/import';
import { AppError, ValidationError } from '../../services/errors';
import { IMPORT_MAX_ROWS } from '../../services/imports';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';

/** /deliveries/import: a carrier's report in, what changed, what matched no order and which words were unknown out. */
export function deliveryPages(services: Services): Router {
  const router = Router();
  router.use('/deliveries', requirePageWorkspace);

  const render = (res: Response, status: number, locals: Record<string, unknown> = {}) =>
    res.status(status).render('deliveries/import', { columns: REPORT_COLUMNS, maxRows: IMPORT_MAX_ROWS, error: null, result: null, carrier: '', ...locals });

  router.get('/deliveries/import', (_req, res) => render(res, 200));

  router.post('/deliveries/import', async (req, res) => {
    const carrier = typeof req.body?.carrier === 'string' ? req.body.carrier.trim().slice(0, 100) : '';
    if (res.locals.uploadError) {
      const tooLarge = res.locals.uploadError instanceof multer.MulterError && res.locals.uploadError.code === 'LIMIT_FILE_SIZE';
      return render(res, tooLarge ? 413 : 400, { carrier, error: req.t(tooLarge ? 'report.tooLarge' : 'report.unreadable') });
    }
    if (!req.file || req.file.size === 0) return render(res, 400, { carrier, error: req.t('importPage.chooseFile') });
    try {
      const result = await services.deliveries.reports.run(workspaceOf(req).workspace.id, req.file.buffer, {
        fileName: (req.file.originalname || 'report').slice(0, 200),
        carrier: carrier || null,
      });
      render(res, 200, { carrier, result });
    } catch (err) {
      if (err instanceof ValidationError) {
        const translate: (text: string) => string = res.locals.message;
        return render(res, 400, { carrier, error: req.t('report.refused', { details: Object.values(err.fields).map(translate).join(' ') }) });
      }
      if (err instanceof AppError && err.status < 500) return render(res, err.status, { carrier, error: err.message });
      throw err;
    }
  });
  return router;
}
