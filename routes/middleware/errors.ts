import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError } from '../../services/errors';

interface HttpError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  limit?: number;
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} kB`;
}

/** Errors raised by body parsing and routing (they carry `type` and/or a 4xx `status`). */
function requestError(err: unknown): AppError | undefined {
  const e = err as HttpError;
  if (e?.type === 'entity.parse.failed') return new AppError(400, 'Request body is not valid JSON', 'INVALID_JSON');
  if (e?.type === 'entity.too.large') return new AppError(413, `Request body is too large (limit ${size(e.limit ?? 100 * 1024)})`, 'PAYLOAD_TOO_LARGE');
  // Any other client error raised by Express itself (e.g. a path that does not URL-decode).
  const status = e?.status ?? e?.statusCode;
  if (status && status >= 400 && status < 500) {
    return new AppError(status, 'The request could not be read', 'BAD_REQUEST');
  }
  return undefined;
}

/** Known errors as they are; anything else becomes a logged 500 with no detail for the client. */
function toAppError(err: unknown, log: { error: (obj: object, msg: string) => void }): AppError {
  if (err instanceof AppError) return err;
  const parsed = requestError(err);
  if (parsed) return parsed;
  log.error({ err }, 'unhandled error');
  return new AppError(500, 'Internal server error');
}

export const jsonNotFound: RequestHandler = (_req, res) => {
  res.status(404).json({ error: 'Not found' });
};

export const jsonErrors: ErrorRequestHandler = (err, req, res, _next) => {
  const error = toAppError(err, req.log);
  if (res.headersSent) return res.end();
  res.status(error.status).json({
    error: error.message,
    ...(error.code ? { code: error.code } : {}),
    ...error.extra,
  });
};

export const htmlNotFound: RequestHandler = (_req, res) => {
  res.status(404).render('error', { title: 'Page not found', message: 'There is nothing at this address.' });
};

export const htmlErrors: ErrorRequestHandler = (err, req, res, _next) => {
  const error = toAppError(err, req.log);
  if (res.headersSent) return res.end();
  const title = error.status === 500 ? 'Something went wrong' : error.status === 404 ? 'Page not found' : 'Request refused';
  const fields = error.extra.fields as Record<string, string> | undefined;
  const message = error.status === 500 ? 'Please try again in a moment.' : fields ? Object.values(fields).join(' ') : error.message;
  res.status(error.status).render('error', { title, message });
};
