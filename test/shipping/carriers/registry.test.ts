import { expect } from 'chai';
import { SHIPPING_ADAPTERS, shippingAdapter } from '../../../services/shipping';

/** The setting that points each kind at its API (carriers.md 6), and the API it points at in production. */
const ORIGINS = {
  sendit: ['SENDIT_API_ORIGIN', 'https://app.sendit.ma/api/v1'],
  ozon_express: ['OZON_API_ORIGIN', 'https://api.ozonexpress.ma'],
  digylog: ['DIGYLOG_API_ORIGIN', 'https://api.digylog.com/api/v2/seller'],
  yalidine: ['YALIDINE_API_ORIGIN', 'https://api.yalidine.app/v1'],
};

describe('Carrier adapters registry', () => {
  it('has one adapter per kind, each with the contract’s fields filled and its origin setting as the spec names it', () => {
    expect(Object.keys(SHIPPING_ADAPTERS)).to.have.members(Object.keys(ORIGINS));
    for (const [kind, adapter] of Object.entries(SHIPPING_ADAPTERS)) {
      expect(adapter.kind, kind).to.equal(kind);
      expect(adapter.title, kind).to.be.a('string').and.not.equal('');
      expect([adapter.originSetting, adapter.defaultOrigin], kind).to.deep.equal(ORIGINS[kind as keyof typeof ORIGINS]);
      expect(adapter.credentials.length, kind).to.be.greaterThan(0);
      for (const field of adapter.credentials) expect(field.name, kind).to.match(/^[a-z_]+$/);
      expect(adapter.limits.concurrency, kind).to.equal(4);
      expect(adapter.limits.perSecond, kind).to.be.within(1, 100);
      expect(adapter.limits.batch, kind).to.equal(kind === 'yalidine' ? 50 : 1);
      for (const fn of [adapter.check, adapter.cities, adapter.create, adapter.meaning]) expect(fn, kind).to.be.a('function');
      // A kind that pushes reads its pushes; one that does not is polled.
      if (adapter.push === 'none') expect(adapter.status, kind).to.be.a('function');
      else expect(adapter.readPush, kind).to.be.a('function');
    }
  });

  it('names the pickup city where the carrier wants one, and the push each kind verifies', () => {
    const shape = Object.fromEntries(Object.values(SHIPPING_ADAPTERS).map((a) => [a.kind, [a.needsPickupCity, a.push]]));
    expect(shape).to.deep.equal({
      sendit: [true, 'signed'],
      ozon_express: [false, 'url_token'],
      digylog: [false, 'none'],
      yalidine: [true, 'signed'],
    });
  });

  it('finds an adapter by its kind, and none for any other word', () => {
    expect(shippingAdapter('digylog')).to.equal(SHIPPING_ADAPTERS.digylog);
    for (const word of ['custom', '', 'toString', '__proto__', 'SENDIT']) expect(shippingAdapter(word), word).to.equal(undefined);
  });
});
