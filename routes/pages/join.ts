import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { AppError, ValidationError } from '../../services/shared';
import type { JoinLink } from '../../services/accounts';
import { forgetContext } from '../middleware/auth';
import { secretAnswer } from '../middleware/compression';
import { signIn } from './auth';
import { errorsByInput, formValues, pageMessage, redirectWithNotice } from './forms';
import { translateMessage } from './view-helpers';

/** What an invitation link's refusals are called on the page (the service's message says why). */
const TITLES: Record<number, string> = {
  403: 'join.forSomeoneElse',
  404: 'join.notFound',
  409: 'join.alreadyMember',
  410: 'join.noLongerWorks',
};

/** Renders the service's refusal of a link as a page with its status; anything else goes on. */
async function orRefusal(req: Request, res: Response, action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (!(err instanceof AppError) || !TITLES[err.status]) throw err;
    res.status(err.status).render('error', { title: req.t(TITLES[err.status]), text: translateMessage(req.t, pageMessage(err)) });
  }
}

/**
 * /join/{token}, where an invitation link leads. Signed out: sign up with the invited address
 * (fixed) or sign in and come back; signed in as that address: a button that joins.
 */
export function joinPages(services: Services): Router {
  const router = Router();
  // The token is in these pages (the form's action): never cached, never compressed beside input.
  router.use('/join/:token', (_req, res, next) => {
    secretAnswer(res);
    next();
  });

  function renderSignUp(
    res: Response,
    token: string,
    link: JoinLink,
    status = 200,
    form: { values?: Record<string, string>; errors?: Record<string, string> } = {},
  ) {
    res.status(status).render('signup', {
      values: { ...form.values, email: link.email },
      errors: form.errors ?? {},
      invitation: { token, workspaceName: link.workspaceName },
    });
  }

  router.get('/join/:token', (req, res) =>
    orRefusal(req, res, async () => {
      const token = req.params.token;
      const link = await services.invitations.open(token, req.ctx?.user);
      if (!req.ctx) return renderSignUp(res, token, link);
      res.render('join', { link, token });
    }),
  );

  router.post('/join/:token', (req, res) =>
    orRefusal(req, res, async () => {
      const token = req.params.token;
      if (req.ctx) {
        const link = await services.invitations.join(token, req.ctx.user);
        forgetContext(req);
        return redirectWithNotice(req, res, '/calls', req.t('auth.joined', { workspace: link.workspaceName }));
      }
      await signUpAndJoin(req, res, token);
    }),
  );

  /** Signing up through the link: the account is for the invited address, whatever was posted. */
  async function signUpAndJoin(req: Request, res: Response, token: string): Promise<void> {
    const link = await services.invitations.open(token);
    const values = formValues(req, ['name']);
    try {
      const user = await services.users.signUp({ ...values, email: link.email, password: formValues(req, ['password']).password }, token);
      await signIn(req, res, user, services);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return renderSignUp(res, token, link, 400, { values, errors: errorsByInput(err) });
    }
    await redirectWithNotice(req, res, '/calls', req.t('auth.welcomeJoined', { workspace: link.workspaceName }));
  }
  return router;
}
