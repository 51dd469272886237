// A BPE token's text made visible: the spaces, newlines and tabs byte-level tokens start or end with.
export function visibleToken(text: string): string {
  return text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥').replace(/\r/g, '␍');
}
