import { expect } from 'chai';
import { csrfFrom, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

const headerOf = (csv: string) => csv.replace(/^\ufeff/, '').split('\r\n')[0];

describe('languages: the CSV export header in the exporter’s language', () => {
  it('en gives the API names, fr and ar their own; ?lang=en always the API names; the file imports back', async () => {
    const owner = await signUp();
    await owner.agent.post('/api/agents').send({ name: 'Youssef', orderHandler: true }).expect(201);
    await testKnex()('orders').insert({
      workspace_id: owner.workspaceId,
      client_name: 'Ali & Co',
      phone: '+212612345678',
      store_name: 'Atlas',
      products_name: 'Argan',
      status: 'confirmed',
    });
    const api =
      'id,created_at,client_name,phone,store_name,products_name,address,status,calls,last_outcome,flags,source,external_id,external_ref,total_amount,currency,placed_at,city,note,delivery_status,carrier,tracking_number,carrier_status';
    expect(headerOf((await owner.agent.get('/api/orders/export.csv').expect(200)).text)).to.equal(api);
    expect(headerOf((await owner.agent.get('/api/orders/export.csv?lang=fr').expect(200)).text)).to.equal(
      'id,ajoutée le,nom,téléphone,boutique,produits,adresse,statut,appels,dernier résultat,alertes,source,identifiant boutique,référence,montant,devise,date de commande,ville,note,livraison,transporteur,n° de suivi,mots du transporteur',
    );
    await owner.agent.put('/api/account').send({ language: 'ar' }).expect(200);
    const arabic = (await owner.agent.get('/api/orders/export.csv').expect(200)).text;
    expect(headerOf(arabic)).to.equal(
      'المعرف,تاريخ الإضافة,الاسم,الهاتف,المتجر,المنتج,العنوان,الحالة,المكالمات,آخر نتيجة,التنبيهات,المصدر,رقم الطلب في المتجر,المرجع,المبلغ,العملة,تاريخ الطلب,المدينة,ملاحظة,التوصيل,شركة التوصيل,رقم التتبع,كلمات شركة التوصيل',
    );
    expect(headerOf((await owner.agent.get('/api/orders/export.csv?lang=en').expect(200)).text)).to.equal(api);
    // The orders page links the export in its own language.
    expect((await owner.agent.get('/orders').expect(200)).text).to.contain('href="/api/orders/export.csv?lang=ar"');

    // The Arabic header goes back in through the import page, status included. (Exported phones start
    // with the CSV-injection guard `'`, which the import does not strip: a row typed as a shop would.)
    const file = `${headerOf(arabic)}\r\n,,Ali & Co,0612345678,Atlas,Argan,,confirmed,,,,,,,,,,,\r\n`;
    const page = await owner.agent.get('/orders/import').expect(200);
    const res = await owner.agent
      .post('/orders/import')
      .field('_csrf', csrfFrom(page.text))
      .field('import_key', /name="import_key" value="([^"]+)"/.exec(page.text)![1])
      .attach('file', Buffer.from(file), { filename: 'orders.csv', contentType: 'text/csv' })
      .expect(200);
    expect(res.text).to.contain('تم استيراد طلب واحد');
    const rows = await testKnex()('orders').where({ workspace_id: owner.workspaceId }).orderBy('created_at');
    expect(rows.map((r) => [r.client_name, r.status])).to.deep.equal([
      ['Ali & Co', 'confirmed'],
      ['Ali & Co', 'confirmed'],
    ]);
  });
});
