// Finds text shown to the user that is written in code instead of a locale file: JSX text, the
// attributes a browser shows or reads aloud, string literals rendered as JSX children, and (in the
// page's non-component modules) string literals that read as an English sentence.
// A line (or the line above it) marked `i18n-exempt: <why>` is skipped: proper names, identifiers.
import ts from 'typescript';

export interface HardcodedText {
  file: string;
  line: number;
  kind: 'jsx-text' | 'jsx-attribute' | 'jsx-literal' | 'prose-literal';
  text: string;
}

/** Attributes whose value the visitor sees or hears. */
const SHOWN_ATTRIBUTES = new Set(['title', 'alt', 'placeholder', 'label', 'aria-label', 'aria-description', 'aria-roledescription', 'aria-valuetext', 'summary']);

/** A word of two or more Latin letters: what a translation would have replaced. */
const WORD = /[A-Za-z]{2,}/;

/** A string that reads as an English sentence or phrase: two or more words, capitalised or punctuated. */
function readsAsProse(s: string): boolean {
  const words = s.match(/[A-Za-z][a-z']+/g) ?? [];
  if (words.length < 2 || !/\s/.test(s.trim())) return false;
  return /^[\s“"(]*[A-Z][a-z]/.test(s) || /[.:!?…]\s*$/.test(s);
}

function exempt(lines: string[], line: number): boolean {
  return /i18n-exempt/.test(lines[line] ?? '') || /i18n-exempt/.test(lines[line - 1] ?? '');
}

/** The literal is code talking to code or to a developer: errors, logs, keys, comparisons, imports. */
function isCodeFacing(node: ts.Node): boolean {
  const p = node.parent;
  if (!p) return false;
  if (ts.isImportDeclaration(p) || ts.isExportDeclaration(p) || ts.isImportTypeNode(p) || ts.isLiteralTypeNode(p)) return true;
  if (ts.isPropertyAssignment(p) && p.name === node) return true;
  if (ts.isElementAccessExpression(p)) return true;
  if (ts.isCaseClause(p)) return true;
  if (
    ts.isBinaryExpression(p) &&
    [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken].includes(
      p.operatorToken.kind,
    )
  )
    return true;
  if (ts.isNewExpression(p) && /Error$/.test(p.expression.getText())) return true;
  if (ts.isCallExpression(p)) {
    const callee = p.expression.getText();
    if (/^console\.|^(t|i18n\.t|translate)$|\.(getItem|setItem|removeItem|addEventListener|querySelector|querySelectorAll|getByTestId|postMessage)$/.test(callee)) return true;
  }
  return false;
}

export function scanSource(file: string, source: string, opts: { prose: boolean }): HardcodedText[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = source.split('\n');
  const found: HardcodedText[] = [];
  const add = (node: ts.Node, kind: HardcodedText['kind'], text: string) => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
    if (!exempt(lines, line)) found.push({ file, line: line + 1, kind, text: text.trim().slice(0, 80) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isJsxText(node)) {
      if (WORD.test(node.text)) add(node, 'jsx-text', node.text);
    } else if (ts.isJsxAttribute(node)) {
      const name = node.name.getText(sf);
      const init = node.initializer;
      const literal =
        init && ts.isStringLiteral(init) ? init : init && ts.isJsxExpression(init) && init.expression && ts.isStringLiteralLike(init.expression) ? init.expression : null;
      if (SHOWN_ATTRIBUTES.has(name) && literal && WORD.test(literal.text)) add(node, 'jsx-attribute', `${name}="${literal.text}"`);
      if (SHOWN_ATTRIBUTES.has(name) || name === 'className' || name === 'data-testid' || name === 'key' || name === 'id') return; // literal values of other attributes are code
    } else if (ts.isJsxExpression(node) && node.expression && (ts.isJsxElement(node.parent) || ts.isJsxFragment(node.parent))) {
      const e = node.expression;
      if (ts.isStringLiteralLike(e)) {
        if (WORD.test(e.text)) add(node, 'jsx-literal', e.text);
        return;
      }
      if (ts.isTemplateExpression(e) && WORD.test(e.head.text + e.templateSpans.map((s) => s.literal.text).join(' '))) {
        add(node, 'jsx-literal', e.getText(sf));
        return;
      }
    } else if (opts.prose && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !isCodeFacing(node)) {
      if (readsAsProse(node.text)) add(node, 'prose-literal', node.text);
    } else if (opts.prose && ts.isTemplateExpression(node) && !isCodeFacing(node)) {
      const text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' {} ');
      if (readsAsProse(text)) add(node, 'prose-literal', text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}
