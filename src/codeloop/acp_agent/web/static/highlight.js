// A small syntax highlighter: one tokenizer (comments, strings, numbers, keywords) with each
// language's keywords and comment marks. It builds text nodes and spans, never HTML.

const C_LIKE = { line: "//", block: ["/*", "*/"] };
const HASH = { line: "#" };
const LANGUAGES = {
  python: {
    ...HASH,
    words: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield match case self",
  },
  javascript: {
    ...C_LIKE,
    words: "async await break case catch class const continue default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type enum implements readonly",
  },
  rust: {
    ...C_LIKE,
    words: "as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err",
  },
  go: {
    ...C_LIKE,
    words: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
  },
  c: {
    ...C_LIKE,
    words: "auto break case char const continue default do double else enum extern float for goto if int long return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected template typename namespace new delete true false nullptr include define",
  },
  shell: {
    ...HASH,
    words: "if then else elif fi for while do done case esac in function return export local echo cd set unset exit",
  },
  json: { words: "true false null" },
};
const ALIASES = {
  py: "python", js: "javascript", ts: "javascript", typescript: "javascript", jsx: "javascript",
  tsx: "javascript", mjs: "javascript", rs: "rust", golang: "go", cpp: "c", "c++": "c", h: "c",
  java: "c", cs: "c", csharp: "c", sh: "shell", bash: "shell", zsh: "shell", console: "shell",
};

const NUMBER = /^(0x[0-9a-fA-F_]+|\d[\d_]*(\.\d+)?([eE][+-]?\d+)?)/;
const WORD = /^[A-Za-z_$][\w$]*/;

function language(name) {
  const key = (name || "").toLowerCase();
  const found = LANGUAGES[ALIASES[key] || key];
  if (!found) return null;
  found.set ??= new Set(found.words.split(" "));
  return found;
}

// `code` as nodes for a <code> element; plain text when the language is unknown.
export function highlight(code, name) {
  const lang = language(name);
  if (!lang) return [document.createTextNode(code)];
  const nodes = [];
  let plain = "";
  const flush = () => {
    if (plain) nodes.push(document.createTextNode(plain));
    plain = "";
  };
  const token = (kind, text) => {
    flush();
    const span = document.createElement("span");
    span.className = `tok-${kind}`;
    span.textContent = text;
    nodes.push(span);
  };
  let i = 0;
  while (i < code.length) {
    const rest = code.slice(i, i + 200);
    const ch = code[i];
    if (lang.line && code.startsWith(lang.line, i)) {
      const end = code.indexOf("\n", i);
      const stop = end < 0 ? code.length : end;
      token("comment", code.slice(i, stop));
      i = stop;
    } else if (lang.block && code.startsWith(lang.block[0], i)) {
      const end = code.indexOf(lang.block[1], i + 2);
      const stop = end < 0 ? code.length : end + lang.block[1].length;
      token("comment", code.slice(i, stop));
      i = stop;
    } else if (ch === '"' || ch === "'" || ch === "`") {
      let j = i + 1;
      while (j < code.length && code[j] !== ch && code[j] !== "\n") j += code[j] === "\\" ? 2 : 1;
      token("string", code.slice(i, j + 1));
      i = j + 1;
    } else if (/\d/.test(ch) && !/[\w$]/.test(code[i - 1] || "")) {
      const match = NUMBER.exec(rest);
      token("number", match[0]);
      i += match[0].length;
    } else if (WORD.test(rest)) {
      const word = WORD.exec(rest)[0];
      if (lang.set.has(word)) token("keyword", word);
      else plain += word;
      i += word.length;
    } else {
      plain += ch;
      i += 1;
    }
  }
  flush();
  return nodes;
}
