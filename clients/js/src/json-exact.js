// A JSON reader for receipt verification that keeps what JSON.parse loses and the Go verifier relies on:
// numbers as their text (compared by value, not as floats), and repeated member names (an error when
// asked: a reader that keeps the first of two "decision"s would read another result than the one checked).

const WS = /[ \t\n\r]*/y;

/** A JSON number kept as its text. */
export class Num {
  constructor(text) { this.text = text; }
  /** canonical is "digits e exponent" with no leading or trailing zeros: equal values give equal text. */
  canonical() {
    const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(this.text);
    const frac = m[3] ?? '';
    let digits = (m[2] + frac).replace(/^0+/, '');
    if (digits === '') return '0';
    let exp = BigInt(m[4] ?? 0) - BigInt(frac.length);
    const trimmed = digits.replace(/0+$/, '');
    exp += BigInt(digits.length - trimmed.length);
    digits = trimmed;
    return `${m[1]}${digits}e${exp}`;
  }
}

/**
 * parseExact parses one JSON document. Objects become null-prototype objects; numbers Num.
 * @param {string} text
 * @param {{rejectRepeats?: boolean}} [opts]
 */
export function parseExact(text, { rejectRepeats = false } = {}) {
  let i = 0;
  const fail = (why) => { throw new SyntaxError(`JSON: ${why} at ${i}`); };
  const ws = () => { WS.lastIndex = i; WS.exec(text); i = WS.lastIndex; };
  const value = (depth) => {
    if (depth > 10000) fail('too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj = Object.create(null);
      ws();
      if (text[i] === '}') { i++; return obj; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a member name');
        const name = string();
        ws();
        if (text[i++] !== ':') fail('expected ":"');
        const v = value(depth + 1);
        if (rejectRepeats && Object.prototype.hasOwnProperty.call(obj, name)) {
          throw new RepeatedNameError(name);
        }
        obj[name] = v;
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return obj; }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return string();
    const lit = /true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    lit.lastIndex = i;
    const m = lit.exec(text);
    if (!m) fail('unexpected character');
    i = lit.lastIndex;
    if (m[0] === 'true') return true;
    if (m[0] === 'false') return false;
    if (m[0] === 'null') return null;
    return new Num(m[0]);
  };
  const string = () => {
    const re = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) fail('bad string');
    i = re.lastIndex;
    return JSON.parse(m[0]);
  };
  const v = value(0);
  ws();
  if (i !== text.length) throw new TrailingDataError();
  return v;
}

export class RepeatedNameError extends Error {
  constructor(name) { super(`member "${name}" appears twice in one object`); }
}
export class TrailingDataError extends Error {
  constructor() { super('the document is followed by more JSON'); }
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Num);

/**
 * firstDifference returns the path of the first difference between two parsed values ("" when equal), with
 * receipts/compare.go's rules: members in name order, numbers equal by value.
 */
export function firstDifference(path, got, want) {
  const root = () => path || '(whole result)';
  if (isObj(want)) {
    if (!isObj(got)) return root();
    const names = [...new Set([...Object.keys(want), ...Object.keys(got)])].sort(byBytes);
    for (const k of names) {
      const sub = path ? `${path}.${k}` : k;
      if ((k in got) !== (k in want)) return sub;
      const d = firstDifference(sub, got[k], want[k]);
      if (d) return d;
    }
    return '';
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return root();
    for (let j = 0; j < want.length; j++) {
      const d = firstDifference(`${path}[${j}]`, got[j], want[j]);
      if (d) return d;
    }
    return '';
  }
  if (want instanceof Num) return got instanceof Num && got.canonical() === want.canonical() ? '' : root();
  return got === want ? '' : root();
}

// Go sorts strings by bytes (UTF-8); for the member names of a result, code-unit order is the same.
const byBytes = (a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b)));
