import type { ErrorRequestHandler, RequestHandler } from 'express';
import { withoutStatementValues } from '../../logger';
import { AppError, ValidationError, msg, recode } from '../../services/shared';
import { translateMessage } from '../pages/view-helpers';

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

/**
 * Postgres's refusals of text it cannot store (NUL, an unpaired surrogate's escape in JSONB, a
 * character the database's encoding lacks): what a client sent, never our fault. Every entry point
 * checks text before a statement; this is the net under them, so that none becomes a 500.
 */
const UNSTORABLE_TEXT = new Set(['22P05', '22021']);

/** Errors raised by body parsing and routing (they carry `type` and/or a 4xx `status`), or by Postgres refusing text a client sent. */
function requestError(err: unknown): AppError | undefined {
  if (UNSTORABLE_TEXT.has((err as { code?: unknown })?.code as string)) return new ValidationError({ body: msg('unsafeText') });
  const e = err as HttpError;
  if (e?.type === 'entity.parse.failed') return new AppError(400, msg('INVALID_JSON'), 'INVALID_JSON');
  if (e?.type === 'entity.too.large') return new AppError(413, msg('bodyTooLarge', { limit: size(e.limit ?? 100 * 1024) }), 'PAYLOAD_TOO_LARGE');
  // Any other client error raised by Express itself (e.g. a path that does not URL-decode).
  const status = e?.status ?? e?.statusCode;
  if (status && status >= 400 && status < 500) {
    return new AppError(status, msg('BAD_REQUEST'), 'BAD_REQUEST');
  }
  return undefined;
}

type ErrorLog = { error: (obj: object, msg: string) => void };

/**
 * A fault of ours goes to the log, its statement's values left out: an unknown error, or the fault
 * (`cause`) behind a 5xx AppError that tells the client what happened (a carrier's report interrupted).
 */
export function logFault(err: unknown, log: ErrorLog): void {
  const fault = err instanceof AppError && err.cause !== undefined ? err.cause : err;
  withoutStatementValues(fault);
  log.error({ err: fault }, 'unhandled error');
}

/** Known errors as they are (a 5xx one logged); anything else becomes a logged 500 with no detail for the client. */
function toAppError(err: unknown, log: ErrorLog): AppError {
  if (err instanceof AppError) {
    if (err.status >= 500) logFault(err, log);
    return err;
  }
  const parsed = requestError(err);
  if (parsed) return parsed;
  logFault(err, log);
  return new AppError(500, msg('internalError'));
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

export const htmlNotFound: RequestHandler = (req, res) => {
  const t = req.t ?? res.app.locals.t;
  res.status(404).render('error', { title: t('errorPage.notFound'), text: t('errorPage.nothingHere') });
};

export const htmlErrors: ErrorRequestHandler = (err, req, res, _next) => {
  const error = toAppError(err, req.log);
  if (res.headersSent) return res.end();
  // The page's language when it was chosen; English when the error came before (the session store down).
  const t = req.t ?? res.app.locals.t;
  const title = t(error.status === 500 ? 'errorPage.failed' : error.status === 404 ? 'errorPage.notFound' : 'errorPage.refused');
  const text =
    error.status === 500
      ? t('errorPage.tryAgain')
      : error instanceof ValidationError
        ? Object.values(error.messages())
            .map((m) => translateMessage(t, m))
            .join(' ')
        : translateMessage(t, recode(error.page));
  res.status(error.status).render('error', { title, text });
};
