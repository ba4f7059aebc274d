import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

/**
 * Secrets never reach the log: credentials and cookies are redacted wherever they appear. JSON
 * lines, one per event; readable and coloured (pino-pretty) only when asked, for a developer's
 * terminal.
 */
export function createLogger(level: string, options: { pretty?: boolean; destination?: pino.DestinationStream } = {}): Logger {
  const settings: pino.LoggerOptions = {
    level,
    // Whatever logs an error (a request, a job, the job engine), a failed statement's values stay out.
    serializers: {
      err: (err: Error) => {
        const serialized = pino.stdSerializers.err(err);
        withoutStatementValues(serialized);
        return serialized;
      },
    },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers.apikey', 'res.headers["set-cookie"]', '*.password', '*.key'],
      censor: '[redacted]',
    },
  };
  if (!options.pretty) return options.destination ? pino(settings, options.destination) : pino(settings);
  return pino(settings, pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}

/** Pretty logs in development when the output is a terminal; JSON lines otherwise, and always in production. */
export function prettyLogs(env: string, stream: { isTTY?: boolean } = process.stdout): boolean {
  return env === 'development' && stream.isTTY === true;
}

/** What Postgres and knex attach to a failed statement's error that can carry the values it was given. */
const VALUE_FIELDS = ['detail', 'where', 'hint', 'internalQuery', 'bindings', 'parameters'] as const;

/**
 * A failed statement's error, made fit for the log: Postgres puts the values it refused in `detail`
 * ("Failing row contains (…)", "Key (…)=(…) already exists"), `where` ("unnamed portal parameter
 * $3 = '…'") and `hint`; knex adds the bound values to a time-out's error; a data exception's
 * message quotes the value ('invalid input syntax for type uuid: "…"'). Any of them can be a
 * secret being written, and errors are logged with every field. They go before anyone catches the
 * error; `code`, `constraint`, `table`, `column` and the SQL with placeholders still say what
 * failed. Listeners run before the statement's promise rejects, in transactions too.
 */
export function withoutStatementValues(err: unknown): void {
  if (err === null || typeof err !== 'object') return;
  const fields = err as Record<string, unknown>;
  for (const name of VALUE_FIELDS) delete fields[name];
  if (typeof fields.code === 'string' && fields.code.startsWith('22')) {
    // The quoted values of Postgres's own words (after knex's "<sql> - "), in the message and in the stack's first line.
    const redact = (line: string) => {
      const at = line.lastIndexOf(' - ');
      return line.slice(0, at + 3) + line.slice(at + 3).replace(/"[^"]*"|'[^']*'/g, '"[redacted]"');
    };
    if (typeof fields.message === 'string') fields.message = redact(fields.message);
    if (typeof fields.stack === 'string') {
      const [first, ...rest] = fields.stack.split('\n');
      fields.stack = [redact(first), ...rest].join('\n');
    }
  }
}
