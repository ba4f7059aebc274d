import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

/**
 * Secrets never reach the log: credentials and cookies are redacted wherever they appear. JSON
 * lines, one per event; readable and coloured (pino-pretty) only when asked, for a developer's
 * terminal.
 */
export function createLogger(level: string, options: { pretty?: boolean } = {}): Logger {
  const settings: pino.LoggerOptions = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers.apikey', 'res.headers["set-cookie"]', '*.password', '*.key'],
      censor: '[redacted]',
    },
  };
  if (!options.pretty) return pino(settings);
  return pino(settings, pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}

/** Pretty logs in development when the output is a terminal; JSON lines otherwise, and always in production. */
export function prettyLogs(env: string, stream: { isTTY?: boolean } = process.stdout): boolean {
  return env === 'development' && stream.isTTY === true;
}
