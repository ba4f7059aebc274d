import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { AppError, ValidationError, msg } from '../../services/shared';
import { IMPORT_MAX_BYTES } from '../../services/orders';
import { guarded, withinTime } from './inbound-bodies';

const multipart = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 5, parts: 7, fieldSize: 1024 },
}).single('file');
const raw = express.raw({ type: () => true, limit: IMPORT_MAX_BYTES });

/**
 * How long an import's file may take to arrive: 10 MB from a phone on a slow line. A sender that
 * stalls past it is answered 408 and its socket closed, so it holds no memory for longer.
 */
export const IMPORT_BODY_TIMEOUT_MS = 5 * 60_000;

/**
 * A file for an import route of the JSON API: a multipart form's `file` (its other fields in
 * `req.body`), or the raw body of any other content type (CSV text, an XLSX file). Over 10 MB is a
 * 413; an unreadable form a 400; past IMPORT_BODY_TIMEOUT_MS a 408. What the file holds is bounded
 * by the spreadsheet reader (rows, cells, work).
 */
export const fileUpload: RequestHandler = guarded(
  withinTime((req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data')) return raw(req, res, next);
    multipart(req, res, (err: unknown) => {
      if (!err) return next();
      if (err instanceof multer.MulterError && err.code === 'LIMIT_FILE_SIZE')
        return next(new AppError(413, msg('importTooLarge', { mb: Math.round(IMPORT_MAX_BYTES / (1024 * 1024)) }), 'PAYLOAD_TOO_LARGE'));
      next(new ValidationError({ file: msg('uploadOneFile') }));
    });
  }, IMPORT_BODY_TIMEOUT_MS),
);

/** The uploaded file's bytes and name (a raw body has none). */
export function uploadedFile(req: Request): { bytes: Buffer; name: string | null } {
  if (req.file) return { bytes: req.file.buffer, name: req.file.originalname || null };
  return { bytes: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), name: null };
}
