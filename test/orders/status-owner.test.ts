import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';

/**
 * One owner of the order's status (issue 54, must-hold 3): services/orders/ writes orders.status
 * (its `transition`, and a person's edit), and no other module does. The scan reads the sources of
 * the folders that run, for the two ways a statement writes it: SQL text (`UPDATE orders … SET …
 * status = …`) and Knex (`('orders')` … `.update({ …status… })` within one statement). A write
 * through a variable (`.update(patch)`) escapes it: such a patch names its columns where it is made.
 */
const SCANNED = ['services', 'routes', 'jobs', 'bin', 'integrations'];
const OWNER = `services${path.sep}orders${path.sep}`;

/** The SET list of every `UPDATE orders` in SQL text (an alias allowed), up to its WHERE, FROM or RETURNING. */
const SQL_UPDATE = /\bUPDATE\s+orders\b(?:\s+(?!SET\b)\w+)?\s+SET\b([\s\S]*?)(?=\bWHERE\b|\bFROM\b|\bRETURNING\b|;|$)/gi;
/** `status = ` or `o.status = `, not `delivery_status =` nor `op_status =`. */
const SETS_STATUS = /(?:^|[^\w.])(?:\w+\.)?status\s*=/i;
/** A Knex query on the orders table (`trx('orders')`, `knex("orders as o")`), up to the end of its statement. */
const KNEX_ORDERS = /\(\s*['"]orders(?:\s+as\s+\w+)?['"]\s*\)([^;]*)/g;
/** A key `status` in an update's object: `status: …`, `'status': …`, or the shorthand `{ status }`. */
const STATUS_KEY = /(?:^|[\s{,])['"]?status['"]?\s*(?::|,|\})/;

/** The argument text of each `.update(` in `text`, to its balancing parenthesis. */
function updateArguments(text: string): string[] {
  const found: string[] = [];
  for (let at = text.indexOf('.update('); at !== -1; at = text.indexOf('.update(', at + 1)) {
    let depth = 0;
    let end = at + '.update'.length;
    for (; end < text.length; end += 1) {
      if (text[end] === '(') depth += 1;
      if (text[end] === ')' && --depth === 0) break;
    }
    found.push(text.slice(at + '.update('.length, end));
  }
  return found;
}

/** The writes of orders.status in one source file's text, each named by its line. */
function statusWrites(source: string): number[] {
  const lineOf = (index: number) => source.slice(0, index).split('\n').length;
  const lines: number[] = [];
  for (const match of source.matchAll(SQL_UPDATE)) if (SETS_STATUS.test(match[1])) lines.push(lineOf(match.index));
  for (const match of source.matchAll(KNEX_ORDERS))
    if (updateArguments(match[1]).some((argument) => STATUS_KEY.test(argument))) lines.push(lineOf(match.index));
  return lines;
}

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/** `file:line` of every write of orders.status outside services/orders/. */
function writesOutsideOrders(root: string): string[] {
  return SCANNED.flatMap((folder) => sourceFiles(path.join(root, folder)))
    .map((file) => path.relative(root, file))
    .filter((file) => !file.startsWith(OWNER))
    .flatMap((file) => statusWrites(fs.readFileSync(path.join(root, file), 'utf8')).map((line) => `${file}:${line}`));
}

describe('one owner of the order’s status (issue 54)', () => {
  it('no module outside services/orders/ writes orders.status', () => {
    expect(writesOutsideOrders(ROOT), 'orders.status written outside services/orders/ (call its `transition`)').to.deep.equal([]);
  });

  it('the scan finds each way of writing it, and leaves the other columns and tables alone', () => {
    const planted = [
      "await trx.raw(`UPDATE orders SET status = 'calling' WHERE id = ?`, [id]);",
      "await trx.raw(\"UPDATE orders SET note = 'x', status = 'calling'\");",
      'await db.raw(`UPDATE orders o\n   SET note = ?, o.status = ?\n WHERE o.id = ?`);',
      "await trx('orders').where({ id }).update({ status: 'pending' });",
      "await knex('orders as o')\n  .whereIn('id', ids)\n  .update({ note: '', 'status': to });",
      "await trx('orders').where({ id }).update({ status });",
    ];
    for (const text of planted) expect(statusWrites(`const x = 1;\n${text}`), text).to.deep.equal([2]);
    const innocent = [
      "await trx.raw('UPDATE orders o SET delivery_status = f.status, op_status = ? FROM final f WHERE o.id = f.order_id');",
      "await trx('orders').where({ id, status: 'calling' }).first('status');",
      "await trx('operations').where({ id }).update({ status: 'cancelled' });",
      "await trx('orders').where({ id }).update({ assigned_to: null });\nawait trx('calls').update({ status: 'x' });",
      "await trx.raw('UPDATE operations SET status = ? WHERE order_id IN (SELECT id FROM orders)');",
    ];
    for (const text of innocent) expect(statusWrites(text), text).to.deep.equal([]);
  });

  it('a planted write in another domain fails the rule, naming its file and line', () => {
    const root = fs.mkdtempSync(path.join(ROOT, '.status-owner-'));
    try {
      fs.mkdirSync(path.join(root, 'services', 'calls'), { recursive: true });
      fs.mkdirSync(path.join(root, 'services', 'orders'), { recursive: true });
      fs.writeFileSync(
        path.join(root, 'services', 'calls', 'planted.ts'),
        "// the order moves\nawait trx('orders').where({ id }).update({ status: 'calling' });\n",
      );
      fs.writeFileSync(path.join(root, 'services', 'orders', 'owner.ts'), "await trx('orders').where({ id }).update({ status: 'calling' });\n");
      expect(writesOutsideOrders(root)).to.deep.equal([path.join('services', 'calls', 'planted.ts:2')]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
