import { parse as parseCookies } from 'cookie';
import { Router } from 'express';
import { languageOf } from '../middleware/i18n';
import type { Request, Response } from 'express';
import type { Config } from '../../config';
import type { Services } from '../../services';
import type { User } from '../../services/accounts';
import { createLimiter } from '../middleware/rate-limit';
import type { LimiterDeps } from '../middleware/rate-limit';
import { destroySession, regenerateSession, saveSession, SESSION_COOKIE } from '../middleware/session';
import { formValues, localPath, renderFormError } from './forms';

const SIGNUP_FIELDS = ['name', 'email', 'workspace'] as const;
const LOGIN_WINDOW_MS = 15 * 60 * 1000;
const SIGNUP_WINDOW_MS = 60 * 60 * 1000;

/** The device cookie: a random value per browser, to tell a sign-in from a new device (only its hash is kept). */
const DEVICE_COOKIE = 'ocs.device';
/** As long as browsers keep a cookie (400 days); each sign-in renews it. */
const DEVICE_MAX_AGE_MS = 400 * 24 * 60 * 60 * 1000;

/**
 * A new session id at sign-in (no fixation); the CSRF token is re-issued with it. The device is
 * remembered for the user; `password`: a sign-in with a password, whose device, if new to the user,
 * is written to the workspace's audit log (a sign-up's device is the account's first).
 */
export async function signIn(req: Request, res: Response, user: User, services: Services, password = false): Promise<void> {
  const sent = parseCookies(req.get('cookie') ?? '')[DEVICE_COOKIE];
  const device = await services.devices.signedIn(user.id, sent, password);
  res.cookie(DEVICE_COOKIE, device.token, { httpOnly: true, sameSite: 'lax', secure: Boolean(req.session.cookie.secure), maxAge: DEVICE_MAX_AGE_MS });
  const ctx = await services.users.context(user.id);
  await regenerateSession(req.session);
  req.session.userId = user.id;
  req.session.ctx = ctx ?? undefined;
  req.session.slidAt = Date.now();
  await saveSession(req.session);
}

/** What the sign-in pages use besides the services: the configuration, and the limiters' Redis and logger. */
export interface AuthPageDeps extends LimiterDeps {
  config: Config;
}

export function authPages(services: Services, deps: AuthPageDeps): Router {
  const router = Router();
  const tooManyAttempts = (req: Request, res: Response, retryAfter: number) => {
    res.status(429).render('login', {
      values: formValues(req, ['email', 'next']),
      errors: { form: req.t('auth.tooManySignIns', { count: Math.ceil(retryAfter / 60) }) },
    });
  };
  const limitPerIp = createLimiter(deps, {
    name: 'login-ip',
    windowMs: LOGIN_WINDOW_MS,
    limit: deps.config.limits.loginPerIp,
    countFailuresOnly: true,
    onLimited: tooManyAttempts,
  });
  const limitPerEmail = createLimiter(deps, {
    name: 'login-email',
    windowMs: LOGIN_WINDOW_MS,
    limit: deps.config.limits.loginPerEmail,
    key: (req) =>
      `email:${String(req.body?.email ?? '')
        .trim()
        .toLowerCase()}`,
    countFailuresOnly: true,
    onLimited: tooManyAttempts,
  });

  // Every attempt counts: each one that passes validation costs a password hash.
  const limitSignups = createLimiter(deps, {
    name: 'signup-ip',
    windowMs: SIGNUP_WINDOW_MS,
    limit: deps.config.limits.signupPerIp,
    onLimited: (req, res, retryAfter) => {
      res.status(429).render('signup', {
        values: formValues(req, SIGNUP_FIELDS),
        errors: { form: req.t('auth.tooManySignUps', { count: Math.ceil(retryAfter / 60) }) },
      });
    },
  });

  router.get('/signup', (_req, res) => res.render('signup', { values: {}, errors: {} }));

  router.post('/signup', limitSignups, async (req, res) => {
    const values = formValues(req, SIGNUP_FIELDS);
    try {
      const user = await services.users.signUp({ ...values, password: formValues(req, ['password']).password }, undefined, languageOf(req));
      await signIn(req, res, user, services);
      res.redirect(303, '/');
    } catch (err) {
      renderFormError(res, err, 'signup', { values });
    }
  });

  // `next`: where to go once signed in (an invitation link's page), if it is a path on this site.
  router.get('/login', (req, res) => {
    const next = localPath(req.query.next) ?? '';
    if (req.ctx) return res.redirect(303, next || '/');
    res.render('login', { values: { next }, errors: {} });
  });

  router.post('/login', limitPerIp, limitPerEmail, async (req, res) => {
    const values = formValues(req, ['email', 'password', 'next']);
    const next = localPath(values.next) ?? '';
    const user = await services.users.authenticate(values.email, values.password);
    if (!user) {
      res.status(401).render('login', { values: { email: values.email, next }, errors: { form: req.t('auth.invalidLogin') } });
      return;
    }
    await signIn(req, res, user, services, true);
    res.redirect(303, next || '/');
  });

  const signOut = async (req: Request, res: Response) => {
    // Signing out ends the shift: the member's orders go to whoever is on shift.
    if (req.ctx?.workspace) await services.team.shifts.set(req.ctx.workspace.id, req.ctx.user.id, false);
    if (req.session) await destroySession(req.session);
    res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', secure: deps.config.isProduction });
    res.redirect(303, '/login');
  };

  router.post('/logout', signOut);

  router.post('/logout/everywhere', async (req, res) => {
    if (req.ctx) await services.users.endAllSessions(req.ctx.user.id);
    await signOut(req, res);
  });
  return router;
}
