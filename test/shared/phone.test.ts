import { expect } from 'chai';
import { normalizeMoroccanPhone } from '../../services/shared';

describe('Moroccan phone numbers', () => {
  const accepted: Array<[string, string]> = [
    ['0612345678', '+212612345678'],
    ['06 12 34 56 78', '+212612345678'],
    ['+212612345678', '+212612345678'],
    ['00212612345678', '+212612345678'],
    ['212612345678', '+212612345678'],
    ['+212 (0)6 12 34 56 78', '+212612345678'],
    ['06-12-34-56-78', '+212612345678'],
    ['0712345678', '+212712345678'],
    ['0522123456', '+212522123456'],
    ['٠٦١٢٣٤٥٦٧٨', '+212612345678'],
  ];
  for (const [input, stored] of accepted) {
    it(`normalizes ${JSON.stringify(input)} to ${stored}`, () => {
      expect(normalizeMoroccanPhone(input)).to.equal(stored);
    });
  }

  const rejected: Array<[string, string]> = [
    ['061234567', 'one digit short ("possible" but not valid)'],
    ['0683123456', 'unallocated range that the "min" metadata would accept'],
    ['+33612345678', 'a valid French number'],
    ['12345', 'too short'],
    ['0800123456', 'toll-free, not a customer line'],
    ['0612345678 ext. 5', 'an extension'],
    ['call 0612345678', 'text around the number'],
    ['0'.repeat(41), 'longer than any phone number'],
  ];
  for (const [input, why] of rejected) {
    it(`rejects ${JSON.stringify(input.length > 20 ? `${input.slice(0, 12)}…` : input)}: ${why}`, () => {
      expect(normalizeMoroccanPhone(input)).to.equal(null);
    });
  }
});
