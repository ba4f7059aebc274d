import { expect } from 'chai';
import { SHIPPING_ADAPTERS } from '../../../services/shipping';
import { SENDIT_KEYS, aParcel, createOne, hexSigned, senditDouble, sessionWith } from '../../helpers/carrier-doubles';

const sendit = SHIPPING_ADAPTERS.sendit;
const CASA = { id: '1', name: 'Casablanca' };
const FES = { id: '3', name: 'Fes' };

describe('Sendit adapter against its double', () => {
  let double: Awaited<ReturnType<typeof senditDouble>>;
  let session: ReturnType<typeof sessionWith>;

  beforeEach(async () => {
    double = await senditDouble();
    session = sessionWith(double, SENDIT_KEYS);
  });
  afterEach(async () => {
    session.close();
    await double.close();
  });

  describe('check', () => {
    it('passes with the right keys (a login)', async () => {
      expect(await sendit.check(session)).to.equal(null);
      expect(double.requests.map((r) => `${r.method} ${r.path}`)).to.deep.equal(['POST /login']);
      expect(double.requests[0].json).to.deep.equal(SENDIT_KEYS);
    });

    it('says the carrier did not answer when it is down (the owner tries again later)', async () => {
      double.switches.serverError = true;
      expect(await sendit.check(session)).to.deep.equal({ field: 'secret_key', reason: 'the carrier did not answer (HTTP 503)' });
    });

    it('names the secret key with the carrier’s reason when the keys are wrong (refused with a 401, or a 200 saying success: false)', async () => {
      const wrong = sessionWith(double, { ...SENDIT_KEYS, secret_key: 'sk_wrong' });
      expect(await sendit.check(wrong)).to.deep.equal({ field: 'secret_key', reason: 'Identifiants incorrects' });
      double.behaviour.loginRefusalStatus = 200;
      expect(await sendit.check(wrong)).to.deep.equal({ field: 'secret_key', reason: 'Identifiants incorrects' });
      expect(await createOne(sendit, wrong, aParcel(FES, { pickupCity: CASA }))).to.deep.equal({
        kind: 'credentials_refused',
        reason: 'Identifiants incorrects',
      });
      wrong.close();
    });
  });

  it('reads every page of the districts, with their Arabic names', async () => {
    const cities = await sendit.cities(session);
    expect(cities.map((c) => c.id)).to.deep.equal(['1', '2', '3', '4', '5', '6', '7']);
    expect(cities[0]).to.deep.equal({ id: '1', name: 'Casablanca', arabicName: 'الدار البيضاء' });
    expect(cities[6]).to.deep.equal({ id: '7', name: 'Casablanca - Maarif', arabicName: null });
    expect(double.requests.map((r) => r.path)).to.deep.equal(['/login', '/districts?page=1', '/districts?page=2', '/districts?page=3']);
  });

  describe('create', () => {
    it('sends exactly the body of the spec with the bearer token, and reads the code and label', async () => {
      const parcel = aParcel(FES, { pickupCity: CASA, reference: '#1042' });
      const outcome = await createOne(sendit, session, parcel);
      const [code] = [...double.parcels.keys()];
      expect(outcome).to.deep.equal({ kind: 'created', parcel: { tracking: code, labelUrl: `${double.url}/labels/${code}.pdf`, carrierStatus: 'PENDING' } });
      const sent = double.requests.find((r) => r.path === '/deliveries');
      expect(sent?.headers.authorization).to.match(/^Bearer tok_/);
      expect(sent?.json).to.deep.equal({
        pickup_district_id: 1,
        district_id: 3,
        name: 'Salma Bennani',
        phone: '0612345678',
        address: '12 rue Ibn Battouta, apt 3',
        amount: 250,
        reference: '#1042',
        comment: 'Appeler avant 18h',
        allow_open: 1,
        allow_try: 0,
        products: '2 × Babouches, 1 × Tajine',
        option_exchange: 0,
      });
    });

    it('logs in once for many parcels, and once more when the token expired', async () => {
      await createOne(sendit, session, aParcel(FES, { pickupCity: CASA, allowOpen: false, note: null }));
      await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }));
      expect(double.requests.filter((r) => r.path === '/login')).to.have.length(1);
      expect(double.requests[1].json).to.include({ allow_open: 0, comment: '' });
      double.expireTokens();
      const outcome = await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }));
      expect(outcome.kind).to.equal('created');
      expect(double.requests.map((r) => r.path)).to.deep.equal(['/login', '/deliveries', '/deliveries', '/deliveries', '/login', '/deliveries']);
      expect(double.parcels.size).to.equal(3);
    });

    it('is refused with the carrier’s words when Sendit refuses the phone', async () => {
      const outcome = await createOne(sendit, session, aParcel(FES, { pickupCity: CASA, phone: '612345678' }));
      expect(outcome).to.deep.equal({ kind: 'refused', reason: 'Les données sont invalides.; Le numéro de téléphone est invalide.' });
      expect(double.parcels.size).to.equal(0);
    });

    it('is credentials_refused when the login is refused, with nothing made', async () => {
      double.switches.wrongCredentials = true;
      const outcome = await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }));
      expect(outcome).to.deep.equal({ kind: 'credentials_refused', reason: 'Identifiants incorrects' });
      expect(double.requests.map((r) => r.path)).to.deep.equal(['/login']);
    });

    it('is credentials_refused when the call is refused after a fresh login', async () => {
      await sendit.check(session);
      double.expireTokens();
      double.switches.wrongCredentials = true;
      const outcome = await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }));
      expect(outcome.kind).to.equal('credentials_refused');
      expect(double.requests.map((r) => r.path)).to.deep.equal(['/login', '/deliveries', '/login']);
    });

    it('is unanswered on a 5xx', async () => {
      await sendit.check(session);
      double.switches.serverError = true;
      expect(await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }))).to.deep.equal({
        kind: 'unanswered',
        reason: 'the carrier answered HTTP 503',
      });
    });

    it('is unanswered when the answer cannot be read (a proxy’s page), the parcel perhaps made', async () => {
      await sendit.check(session);
      double.switches.unreadable = true;
      expect(await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }))).to.deep.equal({
        kind: 'unanswered',
        reason: 'the carrier answered without a tracking number',
      });
      expect(double.parcels.size).to.equal(1);
    });

    it('is unanswered when the connection is reset after the parcel was made (a client that waits longer than the double holds)', async () => {
      const patient = await senditDouble({ lostAnswerHoldMs: 50 });
      const waiting = sessionWith(patient, SENDIT_KEYS, 5000);
      patient.switches.loseCreateAnswer = true;
      expect(await createOne(sendit, waiting, aParcel(FES, { pickupCity: CASA }))).to.deep.equal({ kind: 'unanswered', reason: 'connection closed' });
      expect(patient.parcels.size).to.equal(1);
      waiting.close();
      await patient.close();
    });

    it('is unanswered when the answer is lost after the parcel was made; the look-up finds it by its code, not by our reference', async () => {
      double.switches.loseCreateAnswer = true;
      const parcel = aParcel(FES, { pickupCity: CASA });
      const outcome = await createOne(sendit, session, parcel);
      expect(outcome).to.deep.equal({ kind: 'unanswered', reason: 'timed out' });
      expect(double.parcels.size).to.equal(1);
      const [code] = [...double.parcels.keys()];
      expect(await sendit.lookup?.(session, parcel.reference, null)).to.deep.equal({ kind: 'cannot_tell', reason: 'Sendit cannot be asked by our reference' });
      expect(await sendit.lookup?.(session, parcel.reference, code)).to.deep.equal({
        kind: 'found',
        parcel: { tracking: code, labelUrl: `${double.url}/labels/${code}.pdf`, carrierStatus: 'PENDING' },
      });
      expect(await sendit.lookup?.(session, parcel.reference, 'SD999999')).to.deep.equal({ kind: 'absent' });
    });
  });

  describe('after the parcel is made', () => {
    let code: string;
    beforeEach(async () => {
      const outcome = await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }));
      if (outcome.kind !== 'created') throw new Error(outcome.kind);
      code = outcome.parcel.tracking;
    });

    it('cancels a parcel not yet picked up (DELETE), and says why it cannot once it left', async () => {
      expect(await sendit.cancel?.(session, code)).to.deep.equal({ cancelled: true, reason: null });
      expect(double.parcels.get(code)?.status).to.equal('CANCELED');
      expect(double.requests.at(-1)).to.include({ method: 'DELETE', path: `/deliveries/${code}` });
      const other = await createOne(sendit, session, aParcel(FES, { pickupCity: CASA }));
      const tracking = other.kind === 'created' ? other.parcel.tracking : '';
      (double.parcels.get(tracking) as { status: string }).status = 'TRANSIT';
      expect(await sendit.cancel?.(session, tracking)).to.deep.equal({ cancelled: false, reason: 'Ce colis ne peut plus être annulé' });
    });

    it('fetches the label PDF from its URL, or from the parcel when the URL was not kept', async () => {
      const pdf = await sendit.label?.(session, { tracking: code, labelUrl: `${double.url}/labels/${code}.pdf` });
      expect(pdf?.subarray(0, 5).toString()).to.equal('%PDF-');
      expect(pdf?.toString()).to.include(code);
      const again = await sendit.label?.(session, { tracking: code, labelUrl: null });
      expect(again?.toString()).to.include(code);
      expect(double.requests.at(-1)?.headers.authorization).to.equal(undefined);
    });

    it('answers the parcel’s status in the carrier’s words', async () => {
      (double.parcels.get(code) as { status: string }).status = 'DELIVERING';
      expect(await sendit.status?.(session, code)).to.deep.equal({ tracking: code, words: 'DELIVERING', at: null });
    });
  });

  describe('push', () => {
    const event = {
      event: 'delivery.status.update',
      data: { code: 'SD100001', oldStatus: 'TRANSIT', newStatus: 'DELIVERED', lastActionAt: '2026-11-27 15:02:11', message: 'Livré' },
    };

    it('reads a signed status change (hex HMAC-SHA256 of the raw body with the secret key)', () => {
      const { raw, signature } = hexSigned(event, SENDIT_KEYS.secret_key);
      expect(sendit.readPush?.(raw, { 'x-sendit-signature': signature }, {}, SENDIT_KEYS.secret_key)).to.deep.equal({
        kind: 'updates',
        updates: [{ tracking: 'SD100001', words: 'DELIVERED', at: '2026-11-27T14:02:11.000Z' }],
      });
    });

    it('is unverified with another signature, none, or another key', () => {
      const { raw, signature } = hexSigned(event, 'another key');
      expect(sendit.readPush?.(raw, { 'x-sendit-signature': signature }, {}, SENDIT_KEYS.secret_key)).to.deep.equal({ kind: 'unverified' });
      expect(sendit.readPush?.(raw, {}, {}, SENDIT_KEYS.secret_key)).to.deep.equal({ kind: 'unverified' });
      expect(sendit.readPush?.(raw, { 'x-sendit-signature': 'zz' }, {}, SENDIT_KEYS.secret_key)).to.deep.equal({ kind: 'unverified' });
    });

    it('ignores another event, and calls a signed body without a code unreadable', () => {
      const other = hexSigned({ event: 'invoice.created', data: { id: 4 } }, SENDIT_KEYS.secret_key);
      expect(sendit.readPush?.(other.raw, { 'x-sendit-signature': other.signature }, {}, SENDIT_KEYS.secret_key)).to.deep.equal({ kind: 'ignored' });
      const bad = hexSigned({ event: 'delivery.status.update', data: {} }, SENDIT_KEYS.secret_key);
      expect(sendit.readPush?.(bad.raw, { 'x-sendit-signature': bad.signature }, {}, SENDIT_KEYS.secret_key)).to.deep.equal({ kind: 'unreadable' });
    });
  });

  it('maps every status of the spec, and knows no other word', () => {
    const expected = {
      PENDING: 'shipped',
      TO_PREPARE: 'shipped',
      TO_PICKUP: 'shipped',
      PICKEDUP: 'shipped',
      WAREHOUSE: 'in_transit',
      TRANSIT: 'in_transit',
      NEW_DESTINATION: 'in_transit',
      DISTRIBUTED: 'out_for_delivery',
      DELIVERING: 'out_for_delivery',
      DELIVERED: 'delivered',
      REJECTED: 'refused',
      RETURNED: 'returned',
      UNREACHABLE: 'attempted',
      POSTPONED: 'attempted',
      CANCELED: 'cancelled',
    };
    for (const [word, meaning] of Object.entries(expected)) expect(sendit.meaning(word), word).to.equal(meaning);
    expect(sendit.meaning(' delivered ')).to.equal('delivered');
    expect(sendit.meaning('LOST_IN_SPACE')).to.equal(undefined);
  });
});
