import { expect } from 'chai';
import { SHIPPING_ADAPTERS } from '../../../services/shipping';
import { DIGYLOG_KEYS, DIGYLOG_REFERER, aParcel, createOne, digylogDouble, sessionWith } from '../../helpers/carrier-doubles';

const digylog = SHIPPING_ADAPTERS.digylog;
const FES = { id: '3', name: 'Fès' };

describe('Digylog adapter against its double', () => {
  let double: Awaited<ReturnType<typeof digylogDouble>>;
  let session: ReturnType<typeof sessionWith>;

  beforeEach(async () => {
    double = await digylogDouble();
    session = sessionWith(double, DIGYLOG_KEYS);
  });
  afterEach(async () => {
    session.close();
    await double.close();
  });

  describe('check', () => {
    it('passes when the token works and the store and network are the account’s, every call with the bearer token and the Referer', async () => {
      expect(await digylog.check(session)).to.equal(null);
      expect(double.requests.map((r) => r.path)).to.deep.equal(['/stores', '/networks']);
      for (const r of double.requests) expect(r.headers).to.include({ authorization: `Bearer ${DIGYLOG_KEYS.token}`, referer: DIGYLOG_REFERER });
    });

    it('names the token, the store or the network that is wrong', async () => {
      const badToken = sessionWith(double, { ...DIGYLOG_KEYS, token: 'nope' });
      expect(await digylog.check(badToken)).to.deep.equal({ field: 'token', reason: 'Unauthenticated.' });
      const badStore = sessionWith(double, { ...DIGYLOG_KEYS, store: 'Autre boutique' });
      expect(await digylog.check(badStore)).to.deep.equal({ field: 'store', reason: "not one of the account's: Babouche Shop" });
      const badNetwork = sessionWith(double, { ...DIGYLOG_KEYS, network: '9' });
      expect(await digylog.check(badNetwork)).to.deep.equal({ field: 'network', reason: "not one of the account's: Digylog Express" });
      for (const s of [badToken, badStore, badNetwork]) s.close();
    });
  });

  it('reads the cities', async () => {
    expect(await digylog.cities(session)).to.deep.equal([
      { id: '1', name: 'Casablanca', arabicName: null },
      { id: '2', name: 'Rabat', arabicName: null },
      { id: '3', name: 'Fès', arabicName: null },
    ]);
  });

  describe('create', () => {
    it('sends exactly the body of the spec (checkDuplicate: 1, the city by name) and reads the tracking number', async () => {
      const outcome = await createOne(digylog, session, aParcel(FES, { reference: '#2001', allowOpen: false }));
      const [tracking] = [...double.parcels.keys()];
      expect(outcome).to.deep.equal({ kind: 'created', parcel: { tracking, labelUrl: null, carrierStatus: null } });
      expect(double.requests[0]).to.include({ method: 'POST', path: '/orders' });
      expect(double.requests[0].json).to.deep.equal({
        mode: 1,
        network: 3,
        store: 'Babouche Shop',
        status: 1,
        checkDuplicate: 1,
        orders: [
          {
            type: 1,
            num: '#2001',
            name: 'Salma Bennani',
            phone: '0612345678',
            address: '12 rue Ibn Battouta, apt 3',
            city: 'Fès',
            price: 249.6,
            openproduct: 0,
            note: 'Appeler avant 18h',
            refs: [
              { designation: 'Babouches', quantity: 2 },
              { designation: 'Tajine', quantity: 1 },
            ],
          },
        ],
      });
    });

    it('is refused with the carrier’s errors', async () => {
      expect(await createOne(digylog, session, aParcel({ id: '77', name: 'Ailleurs' }))).to.deep.equal({ kind: 'refused', reason: 'Ville non desservie' });
      expect(double.parcels.size).to.equal(0);
    });

    it('is credentials_refused on a 401, unanswered on a 5xx', async () => {
      double.switches.wrongCredentials = true;
      expect(await createOne(digylog, session, aParcel(FES))).to.deep.equal({ kind: 'credentials_refused', reason: 'Unauthenticated.' });
      double.switches.wrongCredentials = false;
      double.switches.serverError = true;
      expect(await createOne(digylog, session, aParcel(FES))).to.deep.equal({ kind: 'unanswered', reason: 'the carrier answered HTTP 503' });
      expect(double.parcels.size).to.equal(0);
    });

    it('finds the parcel whose answer was lost by sending it again: the carrier refuses the duplicate and names it', async () => {
      double.switches.loseCreateAnswer = true;
      const parcel = aParcel(FES);
      expect(await createOne(digylog, session, parcel)).to.deep.equal({ kind: 'unanswered', reason: 'timed out' });
      double.switches.loseCreateAnswer = false;
      const [tracking] = [...double.parcels.keys()];
      expect(await digylog.lookup?.(session, parcel.reference, null)).to.deep.equal({
        kind: 'found',
        parcel: { tracking, labelUrl: null, carrierStatus: null },
      });
      expect(double.parcels.size).to.equal(1);
      expect(double.requests.at(-1)?.json).to.deep.equal(double.requests[0].json);
    });

    it('sends again an order whose answer could not be read, and finds the parcel made', async () => {
      double.switches.unreadable = true;
      const parcel = aParcel(FES);
      expect(await createOne(digylog, session, parcel)).to.deep.equal({ kind: 'unanswered', reason: 'the carrier answered without the order' });
      double.switches.unreadable = false;
      const found = await digylog.lookup?.(session, parcel.reference, null);
      expect(found?.kind).to.equal('found');
      expect(double.parcels.size).to.equal(1);
    });

    it('cannot tell when the duplicate’s refusal does not name the parcel, nor after the worker forgot what it sent', async () => {
      double.behaviour.duplicateGivesTracking = false;
      double.switches.loseCreateAnswer = true;
      const parcel = aParcel(FES);
      await createOne(digylog, session, parcel);
      double.switches.loseCreateAnswer = false;
      expect(await digylog.lookup?.(session, parcel.reference, null)).to.deep.equal({ kind: 'cannot_tell', reason: 'Commande déjà existante' });
      const fresh = sessionWith(double, DIGYLOG_KEYS);
      expect(await digylog.lookup?.(fresh, parcel.reference, null)).to.deep.equal({ kind: 'cannot_tell', reason: 'Digylog cannot be asked by our reference' });
      fresh.close();
      expect(double.parcels.size).to.equal(1);
    });

    it('takes a duplicate that names the parcel as that parcel (a second create of the same order makes none)', async () => {
      const parcel = aParcel(FES);
      const first = await createOne(digylog, session, parcel);
      const second = await createOne(digylog, session, parcel);
      expect(second).to.deep.equal(first);
      expect(double.parcels.size).to.equal(1);
    });
  });

  describe('after the parcel is made', () => {
    let tracking: string;
    beforeEach(async () => {
      const outcome = await createOne(digylog, session, aParcel(FES));
      tracking = outcome.kind === 'created' ? outcome.parcel.tracking : '';
    });

    it('polls the status (GET /order/{tracking}/infos) in the carrier’s words', async () => {
      (double.parcels.get(tracking) as { status: string }).status = 'Sorti pour livraison';
      expect(await digylog.status?.(session, tracking)).to.deep.equal({ tracking, words: 'Sorti pour livraison', at: '2026-11-27T14:02:11.000Z' });
      expect(double.requests.at(-1)).to.include({ method: 'GET', path: `/order/${tracking}/infos` });
      expect(await digylog.status?.(session, 'DG999999')).to.equal(null);
      expect(await digylog.lookup?.(session, '#x', tracking)).to.deep.equal({
        kind: 'found',
        parcel: { tracking, labelUrl: null, carrierStatus: 'Sorti pour livraison' },
      });
    });

    it('gets the label PDF (POST /labels)', async () => {
      const pdf = await digylog.label?.(session, { tracking, labelUrl: null });
      expect(pdf?.subarray(0, 5).toString()).to.equal('%PDF-');
      expect(double.requests.at(-1)).to.deep.include({ method: 'POST', path: '/labels', json: { orders: [tracking] } });
    });

    it('has no cancel and no push', () => {
      expect(digylog.cancel).to.equal(undefined);
      expect(digylog.readPush).to.equal(undefined);
      expect(digylog.push).to.equal('none');
    });
  });

  it('maps the spec’s French words (and the delivery dictionary’s), attempts not final, and knows no other word', () => {
    const expected = {
      Livré: 'delivered',
      'Retourné à l’expéditeur': 'returned',
      "Retourné à l'expéditeur": 'returned',
      'Sorti pour livraison': 'out_for_delivery',
      'Tentative échouée': 'attempted',
      Injoignable: 'attempted',
      'Pas de réponse': 'attempted',
      Reporté: 'attempted',
      Ramassé: 'shipped',
      'En transit': 'in_transit',
      Refusé: 'refused',
      Annulé: 'cancelled',
      'Arrivé au centre': 'in_transit',
      'Mise en distribution': 'out_for_delivery',
      'LIVREE ': 'delivered',
      مرتجع: 'returned',
    };
    for (const [word, meaning] of Object.entries(expected)) expect(digylog.meaning(word), word).to.equal(meaning);
    expect(digylog.meaning('En vacances')).to.equal(undefined);
  });
});
