import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { AppError, ValidationError, msg } from '../../services/shared';
import { IMPORT_MAX_BYTES } from '../../services/orders';

const multipart = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 5, parts: 7, fieldSize: 1024 },
}).single('file');
const raw = express.raw({ type: () => true, limit: IMPORT_MAX_BYTES });

/**
 * A file for an import route of the JSON API: a multipart form's `file` (its other fields in
 * `req.body`), or the raw body of any other content type (CSV text, an XLSX file). Over 10 MB is a
 * 413; an unreadable form a 400.
 */
export const fileUpload: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
  if (!req.is('multipart/form-data')) return raw(req, res, next);
  multipart(req, res, (err: unknown) => {
    if (!err) return next();
    if (err instanceof multer.MulterError && err.code === 'LIMIT_FILE_SIZE')
      return next(new AppError(413, msg('importTooLarge', { mb: Math.round(IMPORT_MAX_BYTES / (1024 * 1024)) }), 'PAYLOAD_TOO_LARGE'));
    next(new ValidationError({ file: msg('uploadOneFile') }));
  });
};

/** The uploaded file's bytes and name (a raw body has none). */
export function uploadedFile(req: Request): { bytes: Buffer; name: string | null } {
  if (req.file) return { bytes: req.file.buffer, name: req.file.originalname || null };
  return { bytes: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), name: null };
}
