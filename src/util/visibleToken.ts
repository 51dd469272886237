// A token's text with its whitespace made visible: byte-level BPE tokens start or end with spaces,
// newlines and tabs that would otherwise show as nothing (the inspector's table and formulas, the
// own-model panels).
export function visibleToken(text: string): string {
  return text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥').replace(/\r/g, '␍');
}
