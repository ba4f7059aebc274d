/** Arabic-Indic and Persian digits, and the Arabic decimal and thousands marks, as Latin ones. */
function latinDigits(text: string): string {
  return text
    .replace(/[\u0660-\u0669]/g, (d) => String(d.charCodeAt(0) - 0x0660))
    .replace(/[\u06f0-\u06f9]/g, (d) => String(d.charCodeAt(0) - 0x06f0))
    .replace(/\u066b/g, ',')
    .replace(/\u066c/g, '.');
}

/** Spaces a spreadsheet or a keyboard puts between thousands: space, no-break space, narrow no-break space, thin space. */
const SPACES = /[ \u00a0\u202f\u2009]/;

/**
 * An amount as people type it and as French or English spreadsheets write it, as a plain decimal
 * (`"1250.00"`, `"349"`), or undefined when it is not one. The last `,` or `.` followed by one or
 * two digits at the end is the decimal separator; any other `.`, `,` or space between groups of
 * three digits separates thousands, one kind in a number: `349`, `349,50`, `349.50`, `2 490,00`,
 * `1.250,00`, `1,250.00` and `1.250` (1250) are amounts; `1.2.3`, `12,5,0` and `-3` are not.
 */
export function parseAmount(typed: string): string | undefined {
  const text = latinDigits(typed.trim());
  const decimal = /^(.*\d)([.,])(\d{1,2})$/.exec(text);
  const whole = decimal ? decimal[1] : text;
  const fraction = decimal ? decimal[3] : undefined;
  let digits: string;
  if (/^\d+$/.test(whole)) digits = whole;
  else {
    const grouped = /^(\d{1,3})((?:([.,]|[ \u00a0\u202f\u2009])\d{3})+)$/.exec(whole);
    if (!grouped) return undefined;
    const separator = grouped[3];
    const groups = grouped[2].split(SPACES.test(separator) ? SPACES : separator).slice(1);
    // One kind of thousands separator, and never the decimal one.
    if (groups.some((g) => !/^\d{3}$/.test(g)) || (decimal && separator === decimal[2])) return undefined;
    digits = grouped[1] + groups.join('');
  }
  const integer = digits.replace(/^0+(?=\d)/, '');
  return fraction === undefined ? integer : `${integer}.${fraction}`;
}
