/**
 * The parameter names of a function, read from its source text; `undefined` for a destructured or
 * otherwise unnamed parameter. Compiled TypeScript keeps parameter names, so this is reliable for
 * decorated methods (unlike minified code, where templates should use indexes like `<0>`).
 */
export function parameterNames(fn: (...args: never[]) => unknown): (string | undefined)[] {
  const source = Function.prototype.toString.call(fn);
  const open = source.indexOf('(');
  if (open < 0) return [];
  let depth = 0;
  let close = open;
  for (; close < source.length; close++) {
    const char = source[close];
    if (char === '(' || char === '[' || char === '{') depth++;
    else if (char === ')' || char === ']' || char === '}') depth--;
    if (depth === 0) break;
  }
  const list = stripComments(source.slice(open + 1, close));
  return splitTopLevel(list)
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => /^(?:\.\.\.)?([A-Za-z_$][\w$]*)/.exec(part)?.[1]);
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
}

function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const char = list[i];
    if (quote) {
      if (char === '\\') i++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'" || char === '`') quote = char;
    else if ('([{'.includes(char)) depth++;
    else if (')]}'.includes(char)) depth--;
    else if (char === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts;
}
