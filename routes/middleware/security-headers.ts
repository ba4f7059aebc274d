import type { RequestHandler } from 'express';
import helmet from 'helmet';
import type { HelmetOptions } from 'helmet';

/** One header operation helmet performs on a response: set a header, or remove one. */
type HeaderStep = [name: string, value: string] | [name: string];

/**
 * What helmet does to every response with these options, found once by running helmet's own
 * middleware against a recording response. Our options hold no per-request directive (no nonce, no
 * function), so the steps are the same for every request; a test holds them equal to helmet's
 * headers on real responses.
 */
function helmetSteps(options: HelmetOptions): HeaderStep[] {
  const steps: HeaderStep[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => steps.push([name, String(value)]),
    removeHeader: (name: string) => steps.push([name]),
  };
  let failure: unknown;
  helmet(options)({} as never, recorder as never, (err?: unknown) => {
    failure = err;
  });
  if (failure) throw failure;
  return steps;
}

/**
 * helmet's security headers, set from the steps found at start-up: per request a dozen
 * `setHeader` calls, instead of helmet's chain of middleware building and checking the
 * Content-Security-Policy again for each response.
 */
export function securityHeaders(options: HelmetOptions): RequestHandler {
  const steps = helmetSteps(options);
  return (_req, res, next) => {
    for (const step of steps) {
      if (step.length === 2) res.setHeader(step[0], step[1]);
      else res.removeHeader(step[0]);
    }
    next();
  };
}
