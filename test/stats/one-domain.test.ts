import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../config';

/**
 * Statistics live in one domain (services/stats/README.md): no other code reads or writes a counter
 * table, and the statistics' templates only format the figures the service worked out.
 */

/** The tables the counter triggers keep, all owned by services/stats/. */
const COUNTER_TABLES = ['order_status_counts', 'order_counts', 'delivery_counts', 'delivery_day_counts', 'delivery_month_counts', 'call_counts'];

/**
 * Where another domain still names a counter table, and why. The anonymising statement moves a
 * delivered order's count back to its city (`orders_count_deliveries` moved it to "no city"), by day
 * and by month, in the same statement that forgets the city: only that statement still knows it, and orders cannot ask
 * stats (stats imports orders).
 */
const ALLOWED: Record<string, string[]> = { 'services/orders/anonymise.ts': ['delivery_counts', 'delivery_month_counts'] };

/** The code a reader runs, without its comments: a comment may name a counter, a statement may not. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The counter tables a source file's code names. */
function countersNamed(source: string): string[] {
  const code = withoutComments(source);
  return COUNTER_TABLES.filter((table) => new RegExp(`\\b${table}\\b`).test(code));
}

/** The code parts of a template (`<% %>`, `<%= %>`, `<%- %>`; comments aside), string literals emptied. */
function templateCode(template: string): string[] {
  return [...template.matchAll(/<%([=_-]?)([\s\S]*?)[-_]?%>/g)]
    .filter((m) => !m[2].startsWith('#'))
    .map((m) => m[2].replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''"));
}

/** What makes a template compute a figure instead of formatting one. */
const RULES: Array<[string, RegExp]> = [
  ['Math', /\bMath\./],
  ['arithmetic between two values', /[\w\])]\s*[-+*/%]\s*[\w(]/],
  ['a sum over a list', /\.reduce\(/],
  ['a percentage of its own (the formatRate helper says it)', /formatPercent|\bpercent\s*=/],
];

/** The rules a template breaks, with the code that breaks them. */
function computingIn(template: string): string[] {
  return templateCode(template).flatMap((code) => RULES.filter(([, rule]) => rule.test(code)).map(([name]) => `${name}: ${code.trim()}`));
}

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .map((file) => path.join(dir, file))
    .filter((file) => keep(file) && fs.statSync(path.join(ROOT, file)).isFile());
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** Every source outside services/stats/ and the migrations (db/): services, routes, jobs, integrations, bin, the entry points. */
function sourcesOutsideStats(): string[] {
  const code = (file: string) => /\.(ts|sql)$/.test(file) && !file.endsWith('.d.ts');
  return [...['services', 'routes', 'jobs', 'integrations', 'bin'].flatMap((dir) => filesUnder(dir, code)), ...['app.ts', 'server.ts', 'worker.ts']].filter(
    (file) => !file.startsWith(`services${path.sep}stats${path.sep}`),
  );
}

/** The statistics' templates: views/stats*.ejs and every partial named after the statistics. */
const statsViews = () => filesUnder('views', (file) => /stats[^/]*\.ejs$/.test(path.basename(file)));

describe('statistics in one domain (issue 54)', () => {
  it('no code outside services/stats/ names a counter table (the allowed exceptions say why)', () => {
    const found: Record<string, string[]> = {};
    for (const file of sourcesOutsideStats()) {
      const named = countersNamed(read(file));
      if (named.length > 0) found[file.split(path.sep).join('/')] = named;
    }
    expect(found).to.deep.equal(ALLOWED);
  });

  it('services/stats/ does name each counter table (the list above is the real one)', () => {
    const stats = filesUnder(path.join('services', 'stats'), (file) => file.endsWith('.ts'))
      .map(read)
      .join('\n');
    expect(countersNamed(stats)).to.deep.equal(COUNTER_TABLES);
  });

  it('the statistics’ templates compute nothing: no Math, no arithmetic, no sum, no percent helper of their own', () => {
    const views = statsViews();
    expect(views.map((file) => path.basename(file))).to.include.members(['stats.ejs', 'stats-team.ejs', 'delivery-stats.ejs']);
    for (const file of views) expect(computingIn(read(file)), file).to.deep.equal([]);
  });

  it('no template writes a percentage itself: formatRate is the one helper', () => {
    for (const file of filesUnder('views', (name) => name.endsWith('.ejs'))) expect(read(file), file).not.to.match(/formatPercent|\bpercent\s*=/);
  });

  it('the checks do fail: a counter in a query, a rule in a template', () => {
    expect(countersNamed("await knex.raw('SELECT sum(n) FROM call_counts WHERE workspace_id = ?', [id]);")).to.deep.equal(['call_counts']);
    expect(countersNamed("knex('order_status_counts').where({ workspace_id })")).to.deep.equal(['order_status_counts']);
    expect(countersNamed('// kept in sync with delivery_counts\nconst n = 1;')).to.deep.equal([]);
    expect(computingIn("<td><%= formatNumber(r.by_outcome.confirmed + r.by_outcome['order-changed']) %></td>")).to.have.length(1);
    expect(computingIn('<%= Math.round(rate * 100) %> %')).to.have.length(2);
    expect(computingIn("<% const percent = function (rate) { return rate === null ? '—' : formatPercent(rate); }; %>")).to.have.length(1);
    expect(computingIn('<% const total = rows.reduce(function (n, r) { return n + r.calls; }, 0); %>')).to.have.length(2);
    expect(computingIn("<a href=\"/stats?from=<%= stats.from %>\"><%= t('stats.day-label') + ' ' + formatDay(d.date) %></a>")).to.deep.equal([]);
  });
});
