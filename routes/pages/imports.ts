import crypto from 'node:crypto';
import path from 'node:path';
import { Router } from 'express';
import type { NextFunction, Request, Response } from 'express';
import multer from 'multer';
import { ROOT } from '../../config';
import type { Services } from '../../services';
import { AppError, ValidationError, msg } from '../../services/shared';
import { COLUMN_NAMES, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../services/orders';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { guarded, withinTime } from '../middleware/inbound-bodies';
import { IMPORT_BODY_TIMEOUT_MS } from '../middleware/uploads';
import { pageMessage, redirectWithNotice } from './forms';
import type { Message } from '../../services/shared';

export const SAMPLE_FILE = path.join(ROOT, 'examples', 'orders-import-sample.csv');

const upload = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 5, parts: 7, fieldSize: 1024 },
}).single('file');

/**
 * Reads the multipart upload before the CSRF check (which needs the form's `_csrf` field, sent
 * before the file). A refused upload is kept for the page to explain, not thrown at the visitor.
 */
export const receiveImportUpload = guarded(
  withinTime((req: Request, res: Response, next: NextFunction): void => {
    if (!req.is('multipart/form-data')) {
      next();
      return;
    }
    upload(req, res, (err: unknown) => {
      if (err) res.locals.uploadError = err;
      next();
    });
  }, IMPORT_BODY_TIMEOUT_MS),
);

/** The store select's value for "typed by hand". */
const TYPED = '__typed';
const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 300) : '');

function uploadProblem(err: unknown): { status: number; message: Message } {
  if (err instanceof multer.MulterError && err.code === 'LIMIT_FILE_SIZE') return { status: 413, message: msg('fileTooLarge') };
  return { status: 400, message: msg('uploadUnreadable') };
}

/** /orders/import: a CSV file in, a table of what was imported and which lines were skipped out. */
export function importPages(services: Services): Router {
  const router = Router();
  router.use('/orders/import', requirePageWorkspace);

  const render = async (req: Request, res: Response, status: number, locals: Record<string, unknown> = {}) => {
    const workspaceId = workspaceOf(req).workspace.id;
    const connections = (await services.stores.list(workspaceId)).map((c) => c.name);
    res.status(status).render('orders/import', {
      columns: COLUMN_NAMES,
      maxRows: IMPORT_MAX_ROWS,
      importKey: crypto.randomUUID(),
      stores: await services.imports.storeNames(workspaceId, connections),
      storeValues: { store: '', store_typed: '' },
      storeError: null,
      error: null,
      result: null,
      ...locals,
    });
  };

  router.get('/orders/import', (req, res) => render(req, res, 200));
  router.get('/orders/import/sample.csv', (_req, res) => {
    res.attachment('orders-import-sample.csv').type('text/csv; charset=utf-8').sendFile(SAMPLE_FILE);
  });

  router.post('/orders/import', async (req, res) => {
    // The store chosen: one of the list, or typed by hand (the text field wins when it is filled).
    const storeValues = { store: text(req.body?.store), store_typed: text(req.body?.store_typed) };
    const store = storeValues.store_typed.trim() || (storeValues.store === TYPED ? '' : storeValues.store.trim());
    if (res.locals.uploadError) {
      const problem = uploadProblem(res.locals.uploadError);
      return render(req, res, problem.status, { storeValues, error: problem.message });
    }
    if (!req.file || req.file.size === 0) return render(req, res, 400, { storeValues, error: req.t('importPage.chooseFile') });
    const key = typeof req.body?.import_key === 'string' && req.body.import_key !== '' ? req.body.import_key : undefined;
    try {
      // A second press of the button sends the same key: the first import is shown again, not repeated.
      const { result } = await services.imports.importCsv(workspaceOf(req).workspace.id, req.file.buffer, { idempotencyKey: key, store: store || null });
      await render(req, res, 200, { storeValues, result });
    } catch (err) {
      if (err instanceof AppError && err.code === 'NO_ORDER_HANDLER') return redirectWithNotice(req, res, '/agents', req.t('importPage.noHandler'));
      if (err instanceof ValidationError && err.fields.store) return render(req, res, 400, { storeValues, storeError: err.fields.store });
      if (err instanceof ValidationError) {
        // In the page's language here: the view's `message()` knows each part, not the sentence they make.
        const translate: (text: string) => string = res.locals.message;
        const why = err.page.code === 'validationFailed' ? req.t('importPage.notImported') : translate(pageMessage(err));
        const details = Object.values(err.messages()).map(translate).join(' ');
        // A file without a store column: the form's store field says what to do.
        const noStore = err.fields.storeName !== undefined;
        return render(req, res, 400, {
          storeValues,
          storeError: noStore ? req.t('importPage.storeNeeded') : null,
          error: req.t('importPage.refusal', { why, details }),
        });
      }
      if (err instanceof AppError && err.status < 500) return render(req, res, err.status, { storeValues, error: pageMessage(err) });
      throw err;
    }
  });
  return router;
}
