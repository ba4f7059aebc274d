import { expect } from 'chai';
import { SHIPPING_ADAPTERS } from '../../../services/shipping';
import { OZON_KEYS, aParcel, createOne, ozonDouble, sessionWith } from '../../helpers/carrier-doubles';

const ozon = SHIPPING_ADAPTERS.ozon_express;
const FES = { id: '112', name: 'Fès' };

describe('Ozon Express adapter against its double', () => {
  let double: Awaited<ReturnType<typeof ozonDouble>>;
  let session: ReturnType<typeof sessionWith>;

  beforeEach(async () => {
    double = await ozonDouble();
    session = sessionWith(double, OZON_KEYS);
  });
  afterEach(async () => {
    session.close();
    await double.close();
  });

  describe('check', () => {
    it('passes when the id and key are the account’s (a tracking question, answered CHECK_API SUCCESS)', async () => {
      expect(await ozon.check(session)).to.equal(null);
      expect(double.requests).to.have.length(1);
      expect(double.requests[0]).to.include({ method: 'POST', path: `/customers/${OZON_KEYS.customer_id}/${OZON_KEYS.api_key}/tracking` });
    });

    it('names the API key with the carrier’s words when Ozon answers CHECK_API ERROR (HTTP 200)', async () => {
      const wrong = sessionWith(double, { ...OZON_KEYS, api_key: 'not-the-key' });
      expect(await ozon.check(wrong)).to.deep.equal({ field: 'api_key', reason: 'Please verify your API Key' });
      wrong.close();
    });
  });

  it('reads the cities, an object keyed by id', async () => {
    expect(await ozon.cities(session)).to.deep.equal([
      { id: '37', name: 'Agadir', arabicName: null },
      { id: '95', name: 'Casablanca - Maarif', arabicName: null },
      { id: '112', name: 'Fès', arabicName: null },
    ]);
    expect(double.requests.map((r) => `${r.method} ${r.path}`)).to.deep.equal(['GET /cities']);
  });

  describe('create', () => {
    it('sends exactly the multipart form of the spec, the id and key in the path, and reads the tracking number', async () => {
      const outcome = await createOne(ozon, session, aParcel(FES, { allowOpen: false }));
      const [tracking] = [...double.parcels.keys()];
      expect(outcome).to.deep.equal({ kind: 'created', parcel: { tracking, labelUrl: null, carrierStatus: null } });
      const [sent] = double.requests;
      expect(sent.path).to.equal(`/customers/${OZON_KEYS.customer_id}/${OZON_KEYS.api_key}/add-parcel`);
      expect(sent.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
      expect(sent.form).to.deep.equal({
        'parcel-receiver': 'Salma Bennani',
        'parcel-phone': '0612345678',
        'parcel-city': '112',
        'parcel-address': '12 rue Ibn Battouta, apt 3',
        'parcel-price': '249.6',
        'parcel-note': 'Appeler avant 18h',
        'parcel-nature': '2 × Babouches, 1 × Tajine',
        'parcel-open': '2',
        'parcel-stock': '0',
        'tracking-number': '',
      });
      await createOne(ozon, session, aParcel(FES, { allowOpen: true, note: null }));
      expect(double.requests[1].form).to.include({ 'parcel-open': '1', 'parcel-note': '' });
    });

    it('is refused with MESSAGE when Ozon answers HTTP 200 with RESULT ERROR', async () => {
      double.refuseWith('Numéro de téléphone invalide');
      expect(await createOne(ozon, session, aParcel(FES))).to.deep.equal({ kind: 'refused', reason: 'Numéro de téléphone invalide' });
      double.refuseWith(null);
      expect(await createOne(ozon, session, aParcel({ id: '999', name: 'Ailleurs' }))).to.deep.equal({ kind: 'refused', reason: 'Ville introuvable' });
      expect(double.parcels.size).to.equal(0);
    });

    it('keeps the carrier’s words trimmed, on one line, at most 300 characters', async () => {
      double.refuseWith(`  Adresse\n trop longue: ${'x'.repeat(1000)}  `);
      const outcome = await createOne(ozon, session, aParcel(FES));
      expect(outcome.kind === 'refused' && outcome.reason).to.equal(`Adresse trop longue: ${'x'.repeat(279)}`);
    });

    it('never gives back the account’s key, even when the carrier’s words carry it', async () => {
      double.refuseWith(`Clé ${OZON_KEYS.api_key} sans contrat`);
      expect(await createOne(ozon, session, aParcel(FES))).to.deep.equal({ kind: 'refused', reason: 'Clé … sans contrat' });
    });

    it('is credentials_refused when CHECK_API says so', async () => {
      double.switches.wrongCredentials = true;
      expect(await createOne(ozon, session, aParcel(FES))).to.deep.equal({ kind: 'credentials_refused', reason: 'Please verify your API Key' });
    });

    it('is unanswered on a 5xx, an answer lost after the parcel was made (which no look-up can find: Ozon has none), or one it cannot read', async () => {
      double.switches.serverError = true;
      expect(await createOne(ozon, session, aParcel(FES))).to.deep.equal({ kind: 'unanswered', reason: 'the carrier answered HTTP 503' });
      double.switches.serverError = false;
      double.switches.loseCreateAnswer = true;
      expect(await createOne(ozon, session, aParcel(FES))).to.deep.equal({ kind: 'unanswered', reason: 'timed out' });
      expect(double.parcels.size).to.equal(1);
      expect(ozon.lookup).to.equal(undefined);
      double.switches.loseCreateAnswer = false;
      double.switches.unreadable = true;
      expect(await createOne(ozon, session, aParcel(FES))).to.deep.equal({ kind: 'unanswered', reason: 'the carrier answered without a tracking number' });
    });
  });

  it('has no cancel, no label and no status through the API (push only)', () => {
    expect(ozon.cancel).to.equal(undefined);
    expect(ozon.label).to.equal(undefined);
    expect(ozon.status).to.equal(undefined);
    expect(ozon.push).to.equal('url_token');
  });

  describe('push (verified by the URL’s token before it is read)', () => {
    const read = (body: unknown) => ozon.readPush?.(Buffer.from(JSON.stringify(body)), {}, {}, 'the-url-token');

    it('reads tracking_number or TRACKING-NUMBER with orderStatus', () => {
      expect(read({ orderId: 12, tracking_number: 'OZ100001', orderStatus: 'DELIVERED', situation: 'Livré', note: '' })).to.deep.equal({
        kind: 'updates',
        updates: [{ tracking: 'OZ100001', words: 'DELIVERED', at: null }],
      });
      expect(read({ 'TRACKING-NUMBER': 'OZ100002', orderStatus: 'REFUSE' })).to.deep.equal({
        kind: 'updates',
        updates: [{ tracking: 'OZ100002', words: 'REFUSE', at: null }],
      });
    });

    it('ignores a body that is not a parcel’s news, and calls one without a tracking number unreadable', () => {
      expect(read({ ping: true })).to.deep.equal({ kind: 'ignored' });
      expect(read({ orderStatus: 'DELIVERED' })).to.deep.equal({ kind: 'unreadable' });
      expect(ozon.readPush?.(Buffer.from('not json'), {}, {}, 't')).to.deep.equal({ kind: 'unreadable' });
    });
  });

  it('maps every status of the spec, and knows no other word', () => {
    const expected = {
      NEW_PARCEL: 'shipped',
      WAITING_PICKUP: 'shipped',
      PICKED_UP: 'shipped',
      SENT: 'shipped',
      RECEIVED: 'in_transit',
      DISTRIBUTION: 'out_for_delivery',
      IN_PROGRESS: 'out_for_delivery',
      DELIVERED: 'delivered',
      PAID: 'delivered',
      REFUSE: 'refused',
      RETURNED: 'returned',
      POSTPONED: 'attempted',
      NOANSWER: 'attempted',
      NOANSWER_2: 'attempted',
      CANCELED: 'cancelled',
    };
    for (const [word, meaning] of Object.entries(expected)) expect(ozon.meaning(word), word).to.equal(meaning);
    expect(ozon.meaning('ON_THE_MOON')).to.equal(undefined);
  });
});
