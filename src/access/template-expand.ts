// A URI template expanded as far as the known variables reach (RFC 6570 operators), to decide a completion value. Pure.

const OPERATORS: Record<string, { first: string; sep: string; named: boolean }> = {
  '': { first: '', sep: ',', named: false },
  '+': { first: '', sep: ',', named: false },
  '#': { first: '#', sep: ',', named: false },
  '.': { first: '.', sep: '.', named: false },
  '/': { first: '/', sep: '/', named: false },
  ';': { first: ';', sep: ';', named: true },
  '?': { first: '?', sep: '&', named: true },
  '&': { first: '&', sep: '&', named: true },
};

/**
 * Expands `template` left to right while every variable of an expression is in `vars`; stops at
 * the first expression with an unknown variable, leaving it and the rest as they are. Values are
 * inserted as given (no percent-encoding: the result is only decided on, never sent), so a policy
 * sees the URI a client would read with that value. A malformed expression stops the expansion.
 *
 * @example expandKnown('file:///{dir}/{name}', { dir: 'docs' }) // 'file:///docs/{name}'
 */
export function expandKnown(template: string, vars: Readonly<Record<string, string>>): string {
  let out = '';
  let at = 0;
  for (;;) {
    const open = template.indexOf('{', at);
    if (open < 0) return out + template.slice(at);
    const close = template.indexOf('}', open);
    if (close < 0) return out + template.slice(at);
    let body = template.slice(open + 1, close);
    const first = body.charAt(0);
    const op = first !== '' && first in OPERATORS ? first : '';
    if (op) body = body.slice(1);
    const spec = OPERATORS[op]!;
    const names = body.split(',').map((n) => n.replace(/:\d+$|\*$/, ''));
    if (names.some((n) => n === '' || !Object.hasOwn(vars, n))) return out + template.slice(at);
    const parts = names.map((n) => (spec.named ? `${n}=${vars[n]}` : vars[n]!));
    out += template.slice(at, open) + spec.first + parts.join(spec.sep);
    at = close + 1;
  }
}
