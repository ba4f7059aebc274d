import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';

/** What the server says about a name: its addresses, or nothing at all (a nameserver that never answers). */
export type Zone = Record<string, { A?: string[]; AAAA?: string[] } | 'silent'>;

const TYPES: Record<number, 'A' | 'AAAA'> = { 1: 'A', 28: 'AAAA' };

/**
 * A nameserver on 127.0.0.1 (UDP) for the names in `zone`, which the test may change as it goes:
 * A and AAAA answers, NODATA for a type it has no address of, NXDOMAIN for names it does not know,
 * silence for 'silent' names. Every question asked is recorded.
 */
export async function dnsServer(zone: Zone) {
  const queries: Array<{ name: string; type: string }> = [];
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, from) => {
    let offset = 12;
    const labels: string[] = [];
    while (query[offset] !== 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]).toString('ascii'));
      offset += query[offset] + 1;
    }
    const questionEnd = offset + 5;
    const name = labels.join('.').toLowerCase();
    const type = TYPES[query.readUInt16BE(offset + 1)] ?? String(query.readUInt16BE(offset + 1));
    queries.push({ name, type });
    const entry = zone[name];
    if (entry === 'silent') return;
    const addresses = entry && (type === 'A' || type === 'AAAA') ? (entry[type] ?? []) : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | (entry ? 0 : 3), 2); // answer, RD as asked, RA, NOERROR/NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const answers = addresses.map((address) => {
      const data = Buffer.from(ipaddr.parse(address).toByteArray());
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(type === 'A' ? 1 : 28, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(1, 6); // TTL
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    /** For DNS_SERVERS or a HostResolver. */
    address: `127.0.0.1:${socket.address().port}`,
    zone,
    queries,
    asked: (name: string) => queries.filter((q) => q.name === name).length,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
