import crypto from 'node:crypto';
import { expect } from 'chai';
import { SHIPPING_ADAPTERS } from '../../../services/shipping';
import { YALIDINE_KEYS, aParcel, createOne, hexSigned, sessionWith, yalidineDouble } from '../../helpers/carrier-doubles';

const yalidine = SHIPPING_ADAPTERS.yalidine;
const ALGER = { id: '1601|Alger', name: 'Alger Centre' };
const ORAN = { id: '3101|Oran', name: 'Oran' };
/** Quotas no test but the throttling ones comes near. */
const ROOMY = { second: 1000, minute: 1000 };

describe('Yalidine adapter against its double', () => {
  let double: Awaited<ReturnType<typeof yalidineDouble>>;
  let session: ReturnType<typeof sessionWith>;

  const start = async (limits: Parameters<typeof yalidineDouble>[0] = { limits: ROOMY }) => {
    double = await yalidineDouble(limits);
    session = sessionWith(double, YALIDINE_KEYS);
  };
  afterEach(async () => {
    session.close();
    await double.close();
  });

  describe('check', () => {
    beforeEach(() => start());

    it('passes with the right id and token (the wilayas), both sent as headers', async () => {
      expect(await yalidine.check(session)).to.equal(null);
      expect(double.requests[0].headers).to.include({ 'x-api-id': YALIDINE_KEYS.api_id, 'x-api-token': YALIDINE_KEYS.api_token });
    });

    it('names the API token with the carrier’s words when they are refused', async () => {
      const wrong = sessionWith(double, { ...YALIDINE_KEYS, api_token: 'nope' });
      expect(await yalidine.check(wrong)).to.deep.equal({ field: 'api_token', reason: 'Invalid API ID or API TOKEN' });
      wrong.close();
    });
  });

  it('reads the wilayas and every page of the communes, each commune carrying its wilaya', async () => {
    await start();
    expect(await yalidine.cities(session)).to.deep.equal([
      { id: '1601|Alger', name: 'Alger Centre', arabicName: null },
      { id: '1602|Alger', name: 'Bab El Oued', arabicName: null },
      { id: '3101|Oran', name: 'Oran', arabicName: null },
    ]);
    expect(double.requests.map((r) => r.path)).to.deep.equal(['/wilayas?page=1', '/communes?page=1', '/communes?page=2']);
  });

  describe('create', () => {
    beforeEach(() => start());

    it('sends the spec’s array in one call and reads each parcel by its order_id', async () => {
      const made = aParcel(ORAN, { reference: 'A-1', pickupCity: ALGER, name: 'Amine Ait Ouali' });
      const refused = aParcel({ id: '9999|Nowhere', name: 'Nulle part' }, { reference: 'A-2', pickupCity: ALGER, name: 'Karima' });
      const outcomes = await yalidine.create(session, [made, refused]);
      const [tracking] = [...double.parcels.keys()];
      expect(outcomes.get('A-1')).to.deep.equal({
        kind: 'created',
        parcel: { tracking, labelUrl: `${double.url}/labels/${tracking}.pdf`, carrierStatus: 'En préparation' },
      });
      expect(outcomes.get('A-2')).to.deep.equal({ kind: 'refused', reason: 'to_commune_name est invalide' });
      expect(double.requests).to.have.length(1);
      expect(double.requests[0]).to.include({ method: 'POST', path: '/parcels' });
      expect(double.requests[0].json).to.deep.equal([
        {
          order_id: 'A-1',
          from_wilaya_name: 'Alger',
          firstname: 'Amine',
          familyname: 'Ait Ouali',
          contact_phone: '0612345678',
          address: '12 rue Ibn Battouta, apt 3',
          to_commune_name: 'Oran',
          to_wilaya_name: 'Oran',
          product_list: '2 × Babouches, 1 × Tajine',
          price: 250,
          do_insurance: false,
          declared_value: 250,
          freeshipping: false,
          is_stopdesk: false,
          has_exchange: false,
          length: 0,
          width: 0,
          height: 0,
          weight: 1,
        },
        {
          order_id: 'A-2',
          from_wilaya_name: 'Alger',
          firstname: 'Karima',
          familyname: 'Karima',
          contact_phone: '0612345678',
          address: '12 rue Ibn Battouta, apt 3',
          to_commune_name: 'Nulle part',
          to_wilaya_name: 'Nowhere',
          product_list: '2 × Babouches, 1 × Tajine',
          price: 250,
          do_insurance: false,
          declared_value: 250,
          freeshipping: false,
          is_stopdesk: false,
          has_exchange: false,
          length: 0,
          width: 0,
          height: 0,
          weight: 1,
        },
      ]);
    });

    it('sends 50 parcels per call at most', async () => {
      const many = Array.from({ length: 51 }, (_, i) => aParcel(ORAN, { reference: `B-${i}`, pickupCity: ALGER }));
      const outcomes = await yalidine.create(session, many);
      expect([...outcomes.values()].filter((o) => o.kind === 'created')).to.have.length(51);
      expect(double.requests.map((r) => r.json.length)).to.deep.equal([50, 1]);
    });

    it('is credentials_refused on a 401 and unanswered on a 5xx, for every parcel of the call', async () => {
      double.switches.wrongCredentials = true;
      const two = [aParcel(ORAN, { pickupCity: ALGER }), aParcel(ORAN, { pickupCity: ALGER })];
      const refused = await yalidine.create(session, two);
      for (const p of two) expect(refused.get(p.reference)).to.deep.equal({ kind: 'credentials_refused', reason: 'Invalid API ID or API TOKEN' });
      double.switches.wrongCredentials = false;
      double.switches.serverError = true;
      const down = await yalidine.create(session, two);
      for (const p of two) expect(down.get(p.reference)).to.deep.equal({ kind: 'unanswered', reason: 'the carrier answered HTTP 503' });
      expect(double.parcels.size).to.equal(0);
    });

    it('is unanswered when the answer is lost or unreadable after the parcel was made; the look-up by order_id finds it', async () => {
      double.switches.loseCreateAnswer = true;
      const parcel = aParcel(ORAN, { pickupCity: ALGER });
      expect(await createOne(yalidine, session, parcel)).to.deep.equal({ kind: 'unanswered', reason: 'timed out' });
      double.switches.loseCreateAnswer = false;
      const [tracking] = [...double.parcels.keys()];
      expect(await yalidine.lookup?.(session, parcel.reference, null)).to.deep.equal({
        kind: 'found',
        parcel: { tracking, labelUrl: `${double.url}/labels/${tracking}.pdf`, carrierStatus: 'En préparation' },
      });
      expect(double.requests.at(-1)?.path).to.equal(`/parcels?order_id=${encodeURIComponent(parcel.reference)}`);
      expect(await yalidine.lookup?.(session, 'never-sent', null)).to.deep.equal({ kind: 'absent' });
      double.switches.unreadable = true;
      const unread = aParcel(ORAN, { pickupCity: ALGER });
      expect(await createOne(yalidine, session, unread)).to.deep.equal({ kind: 'unanswered', reason: 'the carrier answered without this parcel' });
      double.switches.unreadable = false;
      expect((await yalidine.lookup?.(session, unread.reference, null))?.kind).to.equal('found');
      expect(double.parcels.size).to.equal(2);
    });
  });

  describe('after the parcel is made', () => {
    let tracking: string;
    beforeEach(async () => {
      await start();
      const outcome = await createOne(yalidine, session, aParcel(ORAN, { pickupCity: ALGER }));
      tracking = outcome.kind === 'created' ? outcome.parcel.tracking : '';
    });

    it('cancels while "En préparation" (DELETE), and asks nothing of the carrier past it', async () => {
      expect(await yalidine.cancel?.(session, tracking)).to.deep.equal({ cancelled: true, reason: null });
      expect(double.requests.at(-1)).to.include({ method: 'DELETE', path: `/parcels/${tracking}` });
      expect(double.parcels.size).to.equal(0);
      const other = await createOne(yalidine, session, aParcel(ORAN, { pickupCity: ALGER }));
      const moving = other.kind === 'created' ? other.parcel.tracking : '';
      (double.parcels.get(moving) as { status: string }).status = 'Vers Wilaya';
      expect(await yalidine.cancel?.(session, moving)).to.deep.equal({ cancelled: false, reason: 'Vers Wilaya' });
      expect(double.requests.filter((r) => r.method === 'DELETE')).to.have.length(1);
      expect(double.parcels.has(moving)).to.equal(true);
    });

    it('fetches the label PDF from its URL, without the account’s keys', async () => {
      const pdf = await yalidine.label?.(session, { tracking, labelUrl: null });
      expect(pdf?.subarray(0, 5).toString()).to.equal('%PDF-');
      expect(pdf?.toString()).to.include(tracking);
      expect(double.requests.at(-1)?.path).to.equal(`/labels/${tracking}.pdf`);
      expect(double.requests.at(-1)?.headers['x-api-token']).to.equal(undefined);
    });
  });

  describe('throttling', () => {
    /** A window of the double used up, and kept so however slow the test (its reset is far ahead). */
    const usedUp = (window: 'second' | 'minute' | 'hour') => Object.assign(double.windows[window], { left: 0, startedAt: Date.now() + 3_600_000 });

    it('holds back once the headers say a window is used up, never sooner than that window', async () => {
      await start({ limits: { second: 1000, minute: 2 } });
      expect(await yalidine.check(session)).to.equal(null);
      expect(await yalidine.check(session)).to.equal(null);
      expect(double.windows.minute.left).to.equal(0);
      const outcome = await createOne(yalidine, session, aParcel(ORAN, { pickupCity: ALGER }));
      expect(outcome.kind).to.equal('throttled');
      expect(outcome.kind === 'throttled' && outcome.retryAfterMs).to.be.within(59_000, 60_000);
      expect(double.requests).to.have.length(2);
    });

    it('reads a 429 as throttled for the longest window used up, or Retry-After when longer', async () => {
      await start();
      await yalidine.check(session);
      usedUp('second');
      usedUp('hour');
      const fresh = sessionWith(double, YALIDINE_KEYS);
      const outcome = await createOne(yalidine, fresh, aParcel(ORAN, { pickupCity: ALGER }));
      expect(outcome.kind === 'throttled' && outcome.retryAfterMs).to.be.within(3_599_000, 3_600_000);
      expect(double.requests.at(-1)?.path).to.equal('/parcels');
      expect(double.parcels.size).to.equal(0);
      fresh.close();

      double.windows.hour.left = 10;
      double.windows.second.left = 10;
      usedUp('minute');
      double.control.retryAfterSeconds = 120;
      const other = sessionWith(double, YALIDINE_KEYS);
      const later = await createOne(yalidine, other, aParcel(ORAN, { pickupCity: ALGER }));
      expect(later.kind === 'throttled' && later.retryAfterMs).to.be.within(119_000, 120_000);
      other.close();
    });

    it('waits a whole second for a 429 past the second’s quota, without Retry-After', async () => {
      await start();
      await yalidine.check(session);
      usedUp('second');
      const fresh = sessionWith(double, YALIDINE_KEYS);
      const outcome = await createOne(yalidine, fresh, aParcel(ORAN, { pickupCity: ALGER }));
      expect(outcome.kind === 'throttled' && outcome.retryAfterMs).to.be.within(900, 1000);
      fresh.close();
    });
  });

  describe('push', () => {
    const news = {
      type: 'parcel_status_updated',
      events: [
        { event_id: 'e1', occurred_at: '2026-11-27 15:02:11', data: { tracking: 'yal-100001', status: 'Livré' } },
        { event_id: 'e2', occurred_at: '2026-11-27T16:00:00Z', data: { tracking: 'yal-100002', status: 'Tentative échouée' } },
      ],
    };
    const secret = YALIDINE_KEYS.webhook_secret;

    it('answers the subscription check with the crc_token', () => {
      expect(yalidine.readPush?.(Buffer.alloc(0), {}, { subscribe: '', crc_token: 'abc123' }, secret)).to.deep.equal({ kind: 'challenge', answer: 'abc123' });
    });

    it('reads every event of a signed status change', () => {
      const { raw, signature } = hexSigned(news, secret);
      expect(yalidine.readPush?.(raw, { 'x-yalidine-signature': signature }, {}, secret)).to.deep.equal({
        kind: 'updates',
        updates: [
          { tracking: 'yal-100001', words: 'Livré', at: '2026-11-27T14:02:11.000Z' },
          { tracking: 'yal-100002', words: 'Tentative échouée', at: '2026-11-27T16:00:00.000Z' },
        ],
      });
    });

    it('is unverified with a wrong signature or none (a crc_token without the subscription check is no challenge)', () => {
      const { raw, signature } = hexSigned(news, 'not the secret');
      expect(yalidine.readPush?.(raw, { 'x-yalidine-signature': signature }, {}, secret)).to.deep.equal({ kind: 'unverified' });
      expect(yalidine.readPush?.(raw, {}, {}, secret)).to.deep.equal({ kind: 'unverified' });
      expect(yalidine.readPush?.(raw, {}, { crc_token: 'abc' }, secret)).to.deep.equal({ kind: 'unverified' });
    });

    it('calls a signed body it cannot read unreadable', () => {
      const raw = Buffer.from('{"type": "parcel_status_updated"');
      const signature = crypto.createHmac('sha256', secret).update(raw).digest('hex');
      expect(yalidine.readPush?.(raw, { 'x-yalidine-signature': signature }, {}, secret)).to.deep.equal({ kind: 'unreadable' });
      const signed = hexSigned({ type: 'parcel_status_updated', events: [{ event_id: 'e9', data: { status: 'Livré' } }] }, secret);
      expect(yalidine.readPush?.(signed.raw, { 'x-yalidine-signature': signed.signature }, {}, secret)).to.deep.equal({ kind: 'unreadable' });
    });

    it('ignores another event type', () => {
      const { raw, signature } = hexSigned({ type: 'parcel_payment_updated', events: [{ event_id: 'e3', data: { tracking: 'yal-1' } }] }, secret);
      expect(yalidine.readPush?.(raw, { 'x-yalidine-signature': signature }, {}, secret)).to.deep.equal({ kind: 'ignored' });
    });
  });

  it('maps every status of the spec, and knows no other word', () => {
    const expected = {
      Expédié: 'shipped',
      'En préparation': 'shipped',
      'Vers Wilaya': 'in_transit',
      Centre: 'in_transit',
      'Sorti en livraison': 'out_for_delivery',
      Livré: 'delivered',
      'Echèc livraison': 'refused',
      'Retourné au vendeur': 'returned',
      'Tentative échouée': 'attempted',
    };
    for (const [word, meaning] of Object.entries(expected)) expect(yalidine.meaning(word), word).to.equal(meaning);
    expect(yalidine.meaning('livre')).to.equal('delivered');
    expect(yalidine.meaning('Au marché')).to.equal(undefined);
  });
});
