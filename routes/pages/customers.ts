import { Router } from 'express';
import type { Request, Response } from 'express';
import type { Services } from '../../services';
import { customerPhone } from '../../services/orders';
import { ForbiddenError, isOwner, normalizeMoroccanPhone, shopDay, ValidationError, msg } from '../../services/shared';
import { requirePageWorkspace, workspaceOf } from '../middleware/auth';
import { languageOf } from '../middleware/i18n';
import { firstThenRest, sendChunks } from '../stream';
import { errorsByInput, formValues, redirectWithNotice } from './forms';
import type { FormState } from './forms';

/** A customer's page address: the normalised phone, `+` escaped. */
function customerPath(phone: string): string {
  return `/customers/${encodeURIComponent(phone)}`;
}

/** The phone's digits, for a file's name (`customer-212612345678-2026-11-30.json`). */
function fileName(phone: string, extension: string): string {
  return `customer-${phone.replace(/\D/g, '')}-${shopDay()}.${extension}`;
}

/**
 * A customer's request (issue 58, item 3): /customers finds a customer by phone, /customers/:phone
 * lists the workspace's orders of that phone (any form), exports them (JSON, CSV) and, for the
 * owner, erases them after a confirmation page.
 */
export function customerPages(services: Services): Router {
  const router = Router();
  router.use('/customers', requirePageWorkspace);
  const workspace = (req: Request) => workspaceOf(req).workspace;

  function renderLookup(res: Response, status = 200, form: FormState = {}) {
    res.status(status).render('customers/lookup', { values: form.values ?? { phone: '' }, errors: form.errors ?? {} });
  }

  /** The page of a phone in the address, or the lookup form again (400) naming it. */
  async function renderCustomer(req: Request, res: Response): Promise<void> {
    const typed = String(req.params.phone);
    try {
      const customer = await services.customers.find(workspace(req).id, typed);
      const blocked = await services.blockedPhones.find(workspace(req).id, customer.phone);
      res.render('customers/show', { customer, blocked, path: customerPath(customer.phone), isOwner: isOwner(workspace(req)) });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      renderLookup(res, 400, { values: { phone: typed }, errors: errorsByInput(err) });
    }
  }

  router.get('/customers', (req, res) => {
    const given = req.query.phone;
    if (given === undefined) return renderLookup(res);
    const text = typeof given === 'string' ? given.slice(0, 100) : '';
    const phone = normalizeMoroccanPhone(text.trim());
    if (phone) return res.redirect(303, customerPath(phone));
    renderLookup(res, 400, { values: { phone: text }, errors: errorsByInput(new ValidationError({ phone: msg('phoneInvalid') })) });
  });

  router.get('/customers/:phone', (req, res) => renderCustomer(req, res));

  router.get('/customers/:phone/export.json', async (req, res) => {
    const data = await services.customers.exportJson(workspace(req).id, req.params.phone);
    res.set({ 'Content-Disposition': `attachment; filename="${fileName(data.phone, 'json')}"`, 'Cache-Control': 'no-store' });
    res.type('application/json').send(JSON.stringify(data, null, 2));
  });

  router.get('/customers/:phone/export.csv', async (req, res) => {
    const phone = customerPhone(req.params.phone);
    const rows = await firstThenRest(services.customers.exportCsv(workspace(req).id, phone, languageOf(req)));
    await services.customers.exported(workspace(req).id, phone, 'csv');
    res.set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${fileName(phone, 'csv')}"`,
      'Cache-Control': 'no-store',
    });
    await sendChunks(res, rows);
  });

  /** The confirmation page: the owner's only (a member gets the 403 page). */
  async function renderErase(req: Request, res: Response, status = 200, form: FormState = {}) {
    if (!isOwner(workspace(req))) throw new ForbiddenError();
    const customer = await services.customers.find(workspace(req).id, req.params.phone);
    const blocked = await services.blockedPhones.find(workspace(req).id, customer.phone);
    res.status(status).render('customers/erase', {
      customer,
      blocked,
      path: customerPath(customer.phone),
      values: form.values ?? { phone_again: '', unblock: '' },
      errors: form.errors ?? {},
    });
  }

  router.get('/customers/:phone/erase', (req, res) => renderErase(req, res));

  router.post('/customers/:phone/erase', async (req, res) => {
    if (!isOwner(workspace(req))) throw new ForbiddenError();
    const phone = customerPhone(req.params.phone);
    const values = formValues(req, ['phone_again', 'unblock'] as const);
    // The phone typed again, in any form, is the confirmation.
    if (normalizeMoroccanPhone(values.phone_again.trim()) !== phone) {
      const errors = errorsByInput(new ValidationError({ phone_again: msg('customerPhoneAgain') }));
      return renderErase(req, res, 400, { values, errors });
    }
    const erasure = await services.customers.erase(workspace(req), phone, { unblock: values.unblock === '1' });
    const notice = req.t(erasure.unblocked ? 'customers.notice.erasedUnblocked' : 'customers.notice.erased', { count: erasure.erased });
    await redirectWithNotice(req, res, customerPath(phone), notice);
  });
  return router;
}
