// Hostile spellings of one secret file URI: authorities, escapes, dot segments, query and fragment escapes, controls.

/** Spellings of `file:///secrets/key.txt` (and of escapes from /public towards it) a reader may take for the secret. */
export function hostileSpellings(): string[] {
  const heads = [
    'file:///',
    'FILE:///',
    'File:///',
    'file://localhost/',
    'file://LOCALHOST/',
    'file://%6cocalhost/',
    'file://%6C%6F%63%61%6C%68%6F%73%74/',
    'file://LocalHost/',
    'file:/',
    'file:',
    'file://127.0.0.1/',
    'file://evil.example/',
    'file://localhost:80/',
    'file:////',
    'file://u@localhost/',
  ];
  const paths = [
    'secrets/key.txt',
    '%73ecrets/key.txt',
    's%65cr%65ts/k%65y.txt',
    'secrets/key%2etxt',
    'public/../secrets/key.txt',
    'public/%2e%2e/secrets/key.txt',
    'public/%2E%2E/secrets/key.txt',
    'public/.%2e/secrets/key.txt',
    'public/..%2fsecrets/key.txt',
    'public/..%5Csecrets/key.txt',
    './secrets/key.txt',
    'public/x/../../secrets/key.txt',
    'public/%252e%252e/secrets/key.txt',
    'secrets//key.txt',
    'secrets/./key.txt',
    'public/a.txt/../../secrets/key.txt',
  ];
  const tails = [
    'file:///public/x?/../../secrets/key.txt',
    'file:///public/x#/../../secrets/key.txt',
    'file:///public/x?%2f..%2f..%2fsecrets%2fkey.txt',
    'file:///public/a.txt?/../../secrets/key.txt',
    'file:///public/a.txt#/../../secrets/key.txt',
    'file:///public/x?a=/../../secrets/key.txt',
    'file:///secrets/key.txt%00',
    'file:///secrets/key.txt\t',
    'file:///secrets/key.txt\n',
    'file:///secrets/key.txt ',
    'file:///secrets/key.txt%20',
    'file:///public\\..\\secrets\\key.txt',
    'file:///public/..\\secrets/key.txt',
    'file:///secrets\u2028/key.txt',
    'file:///secrets/key.txt#',
    'file:///secrets/key.txt?',
    'file:///secrets/key.txt?x=1',
    ' file:///secrets/key.txt',
    'file:///secrets/key.txt/',
    'file:///secrets/key.txt/.',
  ];
  return [...new Set([...heads.flatMap((h) => paths.map((p) => h + p)), ...tails])];
}
