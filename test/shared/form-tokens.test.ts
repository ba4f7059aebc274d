import { expect } from 'chai';
import { csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

/** Each creation form: the page that shows it, what it posts, where a repeat goes, and the rows it creates. */
const FORMS: Array<{
  name: string;
  page: string;
  action: string;
  form: Record<string, string>;
  back: string;
  rows: (workspaceId: string) => Promise<number>;
  /** What the creation shows once, in a read-only field to copy. */
  secret?: RegExp;
}> = [
  {
    name: 'an API key',
    page: '/api-keys',
    action: '/api-keys',
    form: { name: 'Plugin' },
    back: '/api-keys',
    secret: /^sk_live_/,
    rows: async (w) => Number((await testKnex()('api_keys').where({ workspace_id: w }).count({ n: '*' }))[0].n),
  },
  {
    name: 'a store connection',
    page: '/stores/new?kind=custom',
    action: '/stores',
    form: { kind: 'custom', name: 'Sheet' },
    back: '/stores',
    secret: /\/hooks\/stores\//,
    rows: async (w) => Number((await testKnex()('store_connections').where({ workspace_id: w }).count({ n: '*' }))[0].n),
  },
  {
    name: 'an invitation',
    page: '/workspace',
    action: '/workspace/invitations',
    form: { email: 'colleague@example.ma' },
    back: '/workspace',
    secret: /\/join\//,
    rows: async (w) => Number((await testKnex()('invitations').where({ workspace_id: w }).count({ n: '*' }))[0].n),
  },
  {
    name: 'a webhook endpoint',
    page: '/webhooks',
    action: '/webhooks',
    form: { url: 'http://127.0.0.1:9/hooks', events: 'order.created' },
    back: '/webhooks',
    // Its signing secret, on the endpoint's page the post leads to.
    secret: /^whsec_/,
    rows: async (w) => Number((await testKnex()('webhook_endpoints').where({ workspace_id: w }).count({ n: '*' }))[0].n),
  },
  {
    name: 'an agent',
    page: '/agents',
    action: '/agents',
    // A voice agent: its signing secret is shown on the answer to the post.
    form: { name: 'Desk', kind: 'voice', endpoint_url: 'http://127.0.0.1:9/calls' },
    back: '/agents',
    secret: /^whsec_/,
    rows: async (w) => Number((await testKnex()('agents').where({ workspace_id: w, name: 'Desk' }).count({ n: '*' }))[0].n),
  },
  {
    name: 'a blocked number',
    page: '/settings',
    action: '/settings/blocked-phones',
    form: { phone: '0612345678' },
    back: '/settings',
    rows: async (w) => Number((await testKnex()('blocked_phones').where({ workspace_id: w }).count({ n: '*' }))[0].n),
  },
];

/** What a session may hold: who is signed in, the CSRF token, a one-time notice — no key or secret. */
const SESSION_KEYS = ['cookie', 'csrfToken', 'ctx', 'notice', 'slidAt', 'userId'];

/** The values of the read-only fields of a page: what it shows once to be copied (keys, secrets, links). */
const shownOnce = (html: string) =>
  [...html.matchAll(/<input[^>]*\sreadonly[^>]*>/g)].map((m) => /value="([^"]+)"/.exec(m[0])?.[1]).filter((v): v is string => !!v);

/** Every session row of the user, as stored. */
const sessionsOf = async (userId: string) => (await testKnex()('session').whereRaw("sess->>'userId' = ?", [userId]).select('sess')).map((r) => r.sess);

const onceFrom = (html: string, action: string) => {
  const form = html.slice(html.indexOf(`action="${action}"`));
  return /name="_once" value="([^"]+)"/.exec(form)![1];
};

describe('one-time form tokens: no creation form creates twice', () => {
  for (const f of FORMS) {
    it(`${f.name}: a reload of the post creates nothing and says the form was sent; a fresh form creates again; what it shows once is never kept in the session`, async () => {
      const owner = await signUp();
      const page = await owner.agent.get(f.page).expect(200);
      const body = { _csrf: csrfFrom(page.text), _once: onceFrom(page.text, f.action), ...f.form };
      const first = await owner.agent.post(f.action).type('form').send(body);
      expect(first.status, first.text.slice(0, 300)).to.be.oneOf([200, 201, 303]);
      expect(await f.rows(owner.workspaceId!)).to.equal(1);
      // What the creation shows once is in its answer (or the page it leads to), never in the session.
      const shown = first.status === 303 ? (await owner.agent.get(first.headers.location).expect(200)).text : first.text;
      const secrets = shownOnce(shown);
      if (f.secret)
        expect(
          secrets.some((v) => f.secret!.test(v)),
          `${f.name}: its key or link is shown`,
        ).to.equal(true);
      const sessions = await sessionsOf(owner.userId);
      expect(sessions).to.have.length.at.least(1);
      for (const sess of sessions) {
        expect(SESSION_KEYS).to.include.members(Object.keys(sess));
        for (const secret of secrets) expect(JSON.stringify(sess)).not.to.contain(secret);
      }
      // The same post again (a reload, a second tap): nothing more, and a notice.
      const again = await owner.agent.post(f.action).type('form').send(body).expect(303);
      expect(again.headers.location).to.equal(f.back);
      const notice = await owner.agent.get(f.back).expect(200);
      expect(notice.text).to.contain('This form was already sent');
      expect(await f.rows(owner.workspaceId!)).to.equal(1);
      // Two taps at once: one creation at most between them.
      const fresh = await owner.agent.get(f.page).expect(200);
      const twice: Record<string, string> = { ...body, _once: onceFrom(fresh.text, f.action) };
      if (f.action === '/settings/blocked-phones') twice.phone = '0661234567';
      if (f.action === '/workspace/invitations') twice.email = 'second@example.ma';
      if (f.action === '/agents') twice.name = 'Desk';
      await Promise.all([owner.agent.post(f.action).type('form').send(twice), owner.agent.post(f.action).type('form').send(twice)]);
      expect(await f.rows(owner.workspaceId!)).to.equal(2);
      expect(await testKnex()('form_tokens').where({ user_id: owner.userId })).to.have.length(2);
    });
  }

  it('a refused form uses no token: the corrected form with the same token creates', async () => {
    const owner = await signUp();
    const page = await owner.agent.get('/settings').expect(200);
    const body = { _csrf: csrfFrom(page.text), _once: onceFrom(page.text, '/settings/blocked-phones'), phone: 'not a phone' };
    await owner.agent.post('/settings/blocked-phones').type('form').send(body).expect(400);
    await owner.agent
      .post('/settings/blocked-phones')
      .type('form')
      .send({ ...body, phone: '0612345678' })
      .expect(303);
    expect(await testKnex()('blocked_phones').where({ workspace_id: owner.workspaceId })).to.have.length(1);
  });
});
