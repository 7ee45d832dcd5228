// Money as the Go engine keeps it: micro-dollars in a BigInt (policy.USD is an int64 of micro-dollars), parsed
// from decimal text exactly, never through a float, so that a cap decides on the digits the caller wrote.

/** Micro-dollars in one dollar. */
export const MICROS_PER_USD = 1_000_000n;
const MAX_MICROS = 1_000_000_000_000n * MICROS_PER_USD; // policy.maxUSD: one trillion dollars

/**
 * parseUSD reads "0.25", "1", "1e-2", or a JS number (through its shortest round-trip text, so 0.05 is
 * "0.05"), into micro-dollars. More than six decimal places are accepted only when the extra digits are
 * zeros; negative amounts and non-numbers throw. Mirrors policy.ParseUSD.
 * @param {string|number|bigint} value
 * @returns {bigint}
 */
export function parseUSD(value) {
  if (typeof value === 'bigint') throw new TypeError('parseUSD: pass dollars as a number or a decimal string');
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a decimal number of US dollars: ${value}`);
    value = String(value);
  }
  if (typeof value !== 'string') throw new TypeError(`not a decimal number of US dollars: ${value}`);
  let s = value.trim();
  const bad = (why = '') => new RangeError(`not a decimal number of US dollars: ${JSON.stringify(value)}${why}`);
  if (s === '') throw bad(' (empty)');
  if (s[0] === '-') throw bad(' is negative');
  if (s[0] === '+') s = s.slice(1);
  let mant = s, exp = 0;
  const e = s.search(/[eE]/);
  if (e >= 0) {
    const es = s.slice(e + 1);
    if (!/^[+-]?\d+$/.test(es)) throw bad();
    exp = Number(es);
    if (exp > 30 || exp < -30) throw bad();
    mant = s.slice(0, e);
  }
  const dot = mant.indexOf('.');
  const intPart = dot >= 0 ? mant.slice(0, dot) : mant;
  const frac = dot >= 0 ? mant.slice(dot + 1) : '';
  if ((intPart === '' && frac === '') || !/^\d*$/.test(intPart) || !/^\d*$/.test(frac)) throw bad();
  let digits = (intPart + frac).replace(/^0+/, '');
  let shift = 6 - (frac.length - exp);
  if (shift < 0) {
    const cut = Math.min(-shift, digits.length);
    if (/[^0]/.test(digits.slice(digits.length - cut))) throw bad(' has more than six decimal places');
    digits = digits.slice(0, digits.length - cut);
    shift = 0;
  }
  if (digits === '') return 0n;
  if (digits.length + shift > 19) throw bad(' is too large');
  const v = BigInt(digits + '0'.repeat(shift));
  if (v > MAX_MICROS) throw bad(' is too large');
  return v;
}

/**
 * formatUSD writes micro-dollars with as few decimals as needed ("0.25", "1", "0.000001"), as the Go
 * engine's reasons do.
 * @param {bigint} micros
 */
export function formatUSD(micros) {
  const neg = micros < 0n;
  if (neg) micros = -micros;
  let s = (micros / MICROS_PER_USD).toString();
  const f = micros % MICROS_PER_USD;
  if (f !== 0n) s += '.' + f.toString().padStart(6, '0').replace(/0+$/, '');
  return neg ? '-' + s : s;
}
