import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { expect } from 'chai';
import request from 'supertest';
import { ROOT } from '../../config';
import { appUrl, signUp } from '../helpers/app';
import { testKnex } from '../helpers/db';

const SCRIPT = fs.readFileSync(path.join(ROOT, 'examples', 'google-sheets', 'Code.gs'), 'utf8');

interface Fetched {
  url: string;
  options: { method: string; contentType: string; headers: Record<string, string>; payload: string };
}

/** Apps Script's bytes are Java's: signed, -128..127. */
const signed = (buffer: Buffer) => [...buffer].map((b) => (b > 127 ? b - 256 : b));
const unsigned = (bytes: number[]) => Buffer.from(bytes.map((b) => b & 0xff));

/**
 * The Apps Script services the script uses, standing in for Google's: Utilities as documented
 * (byte arrays in and out), a sheet of rows, script properties, and UrlFetchApp recording each
 * request (answered as our intake answers a created order).
 */
function appsScript(rows: unknown[][], properties: Record<string, string>) {
  const fetched: Fetched[] = [];
  const written: Array<[number, number, unknown]> = [];
  const context = {
    Utilities: {
      base64Decode: (text: string) => signed(Buffer.from(text, 'base64')),
      base64Encode: (bytes: number[]) => unsigned(bytes).toString('base64'),
      newBlob: (text: string) => ({ getBytes: () => signed(Buffer.from(text, 'utf8')) }),
      computeHmacSha256Signature: (value: number[], key: number[]) => signed(crypto.createHmac('sha256', unsigned(key)).update(unsigned(value)).digest()),
      getUuid: () => crypto.randomUUID(),
    },
    UrlFetchApp: {
      fetch: (url: string, options: Fetched['options']) => {
        fetched.push({ url, options });
        return { getResponseCode: () => 200, getContentText: () => JSON.stringify({ ok: true, result: 'created' }) };
      },
    },
    PropertiesService: { getScriptProperties: () => ({ getProperty: (name: string) => properties[name] }) },
    SpreadsheetApp: {
      getActiveSheet: () => ({
        getDataRange: () => ({ getValues: () => rows }),
        getRange: (row: number, column: number) => ({ setValue: (value: unknown) => written.push([row, column, value]) }),
      }),
    },
    JSON,
    Math,
    Date,
    String,
  };
  vm.runInNewContext(`${SCRIPT}\nsendNewRows();`, context);
  return { fetched, written };
}

describe('examples/google-sheets: the Apps Script (custom source)', () => {
  it('signs each new row so that our intake accepts it, and skips rows already sent', async () => {
    const s = await signUp();
    await s.agent.post('/api/agents').send({ name: 'Desk', orderHandler: true }).expect(201);
    const store = (await s.agent.post('/api/stores').send({ kind: 'custom', name: 'Feuille' }).expect(201)).body;
    const rows = [
      ['Order id', 'Client name', 'Phone', 'Products', 'Address', 'Total', 'Sent'],
      ['A-1', 'Salma Idrissi', '0612345678', '2 × Savon noir', 'Rue 3, Agadir', 120, ''],
      ['A-2', 'Omar Tazi', '0712345678', 'Tajine', '', '', 'created'],
      ['', 'No id yet', '0612345678', 'Thé', '', '', ''],
      ['A-3', 'Nadia Berrada', '0661234567', 'Caftan brodé', '', 349.5, ''],
    ];
    const { fetched, written } = appsScript(rows, { INTAKE_URL: store.intake_url, SIGNING_KEY: store.secret });
    expect(fetched.map((f) => JSON.parse(f.options.payload).data.external_id)).to.deep.equal(['A-1', 'A-3']);
    expect(written).to.deep.equal([
      [2, 7, 'created'],
      [5, 7, 'created'],
    ]);
    for (const f of fetched) {
      expect(f.url).to.equal(store.intake_url);
      const res = await request(appUrl())
        .post(new URL(f.url).pathname)
        .set(f.options.headers)
        .set('Content-Type', f.options.contentType)
        .send(f.options.payload)
        .expect(200);
      expect(res.body).to.deep.equal({ ok: true, result: 'created' });
    }
    const orders = await testKnex()('orders').where({ store_connection_id: store.id }).orderBy('external_id');
    expect(orders.map((o) => [o.external_id, o.client_name, o.phone, o.products_name, o.address, o.total_amount, o.source])).to.deep.equal([
      ['A-1', 'Salma Idrissi', '+212612345678', '2 × Savon noir', 'Rue 3, Agadir', 120, 'custom'],
      ['A-3', 'Nadia Berrada', '+212661234567', 'Caftan brodé', null, 349.5, 'custom'],
    ]);
  });
});
