import crypto from 'node:crypto';
import type express from 'express';
import type { RequestHandler } from 'express';
import type { Logger } from '../../logger';

const REQUEST_ID_RE = /^[\w.-]{1,64}$/;
/** An invitation link's token is a credential: its path is logged without it. */
const JOIN_TOKEN_RE = /^(\/join\/)[^/]+/i;
/** A customer's phone in a path (/customers/:phone, /api/customers/:phone) is personal data: logged without it. */
const CUSTOMER_PHONE_RE = /^((?:\/api)?\/customers\/)[^/]+/i;
/** A carrier account's push URL carries its token (carriers that do not sign): never in a log line. */
const CARRIER_TOKEN_RE = /^(\/hooks\/carrier-accounts\/[^/]+\/)[^/?]+/i;

/** What a request's log lines say about it: its id, method and path (never its query, headers or body). */
interface RequestInfo {
  id: string;
  method: string;
  url: string;
}

const INFO = Symbol('request log info');
const CHILD = Symbol('request logger');
type Logged = express.Request & { [INFO]?: RequestInfo; [CHILD]?: Logger };

/**
 * One line per request when its answer is done (`request completed`, or `request errored` at error
 * level for a 5xx), with the request's id, method, path, status and time in ms, in the shape
 * pino-http writes. The id is the caller's `X-Request-Id` when it is a sane token, else a new UUID,
 * and is sent back in `X-Request-Id`. `req.log` is a child logger carrying the same fields, made
 * only when a handler asks for it: most requests log nothing but their line.
 */
export function requestLog(app: express.Express, logger: Logger): RequestHandler {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Logged): Logger {
      const info = this[INFO];
      if (!info) return logger;
      this[CHILD] ??= logger.child({ req: info });
      return this[CHILD];
    },
  });
  // The request's line holds only fields picked here (id, method, path without its query, status,
  // time), never a secret: it skips the logger's redaction, which parses every redacted path again
  // for each line written. Any other line (`req.log`, errors) is still redacted.
  const lines = logger.child({}, { redact: { paths: [] } });
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : crypto.randomUUID();
    res.setHeader('X-Request-Id', id);
    const query = req.url.indexOf('?');
    const path = query === -1 ? req.url : req.url.slice(0, query);
    const info: RequestInfo = {
      id,
      method: req.method,
      url: path.replace(JOIN_TOKEN_RE, '$1[redacted]').replace(CUSTOMER_PHONE_RE, '$1[redacted]').replace(CARRIER_TOKEN_RE, '$1[redacted]'),
    };
    (req as Logged)[INFO] = info;
    req.id = id;
    const started = performance.now();
    // A response always closes (after finishing, or when the client went away first).
    res.once('close', () => {
      const line = { req: info, res: { statusCode: res.statusCode }, responseTime: Math.round(performance.now() - started) };
      if (res.statusCode >= 500) lines.error({ ...line, err: { message: `failed with status code ${res.statusCode}` } }, 'request errored');
      else if (!res.writableFinished) lines.info(line, 'request aborted');
      else lines.info(line, 'request completed');
    });
    next();
  };
}
