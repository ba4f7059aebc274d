import { expect } from 'chai';
import type { SignedIn } from '../helpers/app';
import { csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';
import { createOrder, openAllDay, operationRow, orderRow } from '../helpers/loop';

/**
 * Issue 53, friction 13 and "what must hold" 7: a refused outcome traps nothing. "No answer" with a
 * callback time typed is refused (it asks: call back then, or clear the time), and the page comes
 * back with the time still in its field; a final outcome pressed on that page as it is shown is
 * recorded, the time ignored: it plans no call, so the time means nothing for it.
 */

async function shop(): Promise<SignedIn> {
  const owner = await signUp({ name: 'Youssef Amrani' });
  await owner.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
  await openAllDay(owner);
  return owner;
}

/** Tomorrow at 15:30, Morocco time, as the datetime-local field holds it. */
function tomorrowLocal(): string {
  const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Casablanca' }).format(new Date(Date.now() + 86_400_000));
  return `${day}T15:30`;
}

/** Every field of the outcome form as the page shows it (hidden, text, textarea), as a browser posts them. */
function formOf(html: string): Record<string, string> {
  const form = /<form method="post" action="\/calls\/[^"]+\/outcome"[\s\S]*?<\/form>/.exec(html)?.[0];
  expect(form, 'the outcome form').to.be.a('string');
  const fields: Record<string, string> = {};
  for (const m of form!.matchAll(/<input\b[^>]*>/g)) {
    const name = /\bname="([^"]+)"/.exec(m[0])?.[1];
    if (!name || /type="checkbox"/.test(m[0])) continue;
    fields[name] = /\bvalue="([^"]*)"/.exec(m[0])?.[1]?.replaceAll('&#34;', '"').replaceAll('&amp;', '&') ?? '';
  }
  for (const m of form!.matchAll(/<textarea\b[^>]*name="([^"]+)"[^>]*>([^<]*)<\/textarea>/g)) fields[m[1]] = m[2];
  return fields;
}

/** Confirmed, declined, wrong number, could not call: the outcome buttons that plan no call back. */
const FINAL = ['confirmed', 'unconfirmed', 'unrecognized', 'failed'];

describe('a refused outcome traps nothing (issue 53, friction 13)', () => {
  for (const outcome of FINAL) {
    it(`"No answer" with a typed time is refused; then "${outcome}" pressed on the page as shown is recorded, the time ignored`, async () => {
      const owner = await shop();
      const order = await createOrder(owner);
      const start = await owner.agent.get('/calls').expect(200);
      const claimed = await owner.agent
        .post('/calls/next')
        .type('form')
        .send({ _csrf: csrfFrom(start.text) })
        .expect(303);
      const callPath = claimed.headers.location as string;
      const callId = callPath.split('/').pop()!;
      const callPage = await owner.agent.get(callPath).expect(200);
      const typed = tomorrowLocal();

      // "No answer" with the time typed: refused beside the field, nothing written, the time kept.
      const refused = await owner.agent
        .post(`${callPath}/outcome`)
        .type('form')
        .send({ ...formOf(callPage.text), callback_at: typed, outcome: 'no-answer' })
        .expect(400);
      expect(refused.text).to.match(/<p class="error" id="f-callback_at-error">You typed a callback time but tapped “No answer”/);
      const shown = formOf(refused.text);
      expect(shown.callback_at, 'the field stays filled').to.equal(typed);
      expect(shown._csrf).to.be.a('string').and.not.equal('');
      const call = await testKnex()('calls').where({ id: callId }).first();
      expect(call).to.include({ ended_at: null, outcome: null });

      // The next tap, on the page as it was given back (the time still there): recorded.
      const recorded = await owner.agent
        .post(`${callPath}/outcome`)
        .type('form')
        .send({ ...shown, outcome })
        .expect(303);
      expect(recorded.headers.location).to.equal('/calls');
      const ended = await testKnex()('calls').where({ id: callId }).first();
      expect(ended.outcome).to.equal(outcome);
      expect(ended.ended_at).to.be.an.instanceOf(Date);
      expect(ended.callback_at, 'a callback time means nothing for this outcome').to.equal(null);
      expect((await orderRow(order.id)).status).to.equal(outcome);
      const op = await operationRow(ended.operation_id);
      if (outcome === 'failed') {
        // "Could not call" tries again after the usual interval (2 hours), not at the typed time.
        expect(op.status).to.equal('pending');
        expect(op.next_attempt_at.getTime() - ended.ended_at.getTime()).to.be.closeTo(120 * 60_000, 60_000);
      } else expect(op).to.include({ status: 'completed', next_attempt_at: null });
    });
  }

  it('"No answer" pressed again with the time kept is refused again; cleared, it is recorded and retried at the usual interval', async () => {
    const owner = await shop();
    const order = await createOrder(owner);
    const start = await owner.agent.get('/calls').expect(200);
    const callPath = (
      await owner.agent
        .post('/calls/next')
        .type('form')
        .send({ _csrf: csrfFrom(start.text) })
        .expect(303)
    ).headers.location as string;
    const page = await owner.agent.get(callPath).expect(200);
    const typed = tomorrowLocal();
    const first = await owner.agent
      .post(`${callPath}/outcome`)
      .type('form')
      .send({ ...formOf(page.text), callback_at: typed, outcome: 'no-answer' })
      .expect(400);
    await owner.agent
      .post(`${callPath}/outcome`)
      .type('form')
      .send({ ...formOf(first.text), outcome: 'no-answer' })
      .expect(400);
    expect((await orderRow(order.id)).status).to.equal('calling');
    await owner.agent
      .post(`${callPath}/outcome`)
      .type('form')
      .send({ ...formOf(first.text), callback_at: '', outcome: 'no-answer' })
      .expect(303);
    expect((await orderRow(order.id)).status).to.equal('no-answer');
  });
});
