/*
 * errcat: the search box finds the error from what was pasted into it.
 *
 * The rules are `errcat explain`'s (catalog/matching/messages.py), applied to the site's template index
 * (search/errcat-match.json, written by catalog/matching/browser_index.py): a whole id or class
 * name names its entry; a docs link names its entry; `Class: message` is that class's entry,
 * or narrows the candidates to the entries raised as that class; otherwise every template whose
 * anchor word occurs in the text is tried, first against the whole text, then anywhere in it,
 * and the most specific match wins (most literal characters; ties are all shown, by id).
 * tests/test_match_index.py runs this file under Node against Python's matcher on the whole
 * catalog, so a change to one set of rules without the other fails there.
 *
 * The matches are shown first in Material's result list, as Material's own items, followed by
 * its word-search results. Material clears and refills that list whenever its search worker
 * answers, so a MutationObserver puts them back on top. The index is fetched, from the site's
 * own origin, the first time the search box gets focus.
 */
(function (root, factory) {
  "use strict";
  const api = factory();
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.errcatMatch = api;
    if (typeof document !== "undefined") api.attach(document, document.currentScript);
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  const FORMAT = 1;
  const MAX_LINE_CHARS = 8192;
  const SHOWN = 10;
  // What Python's str.isspace() and re's \s call whitespace (JavaScript's \s differs slightly).
  const SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  // ASCII punctuation but `_`: it separates words, as in the Python matcher.
  const SEPARATORS = "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~";
  const SEPARATOR_SET = new Set(SEPARATORS);
  const IN_CLASS = SEPARATORS.replace(/[\\\]\[^-]/g, "\\$&");
  const EDGE = "[^" + SPACE + IN_CLASS + "]";
  const BEFORE_EDGE = "(?<!" + EDGE + ")";
  const AFTER_EDGE = "(?!" + EDGE + ")";
  // Python's \w in a str pattern: letters, digits and other numerals, `_`.
  const W = "[\\p{L}\\p{N}_]";
  const LINK = /\/errors\/([0-9a-f]{16})\//;
  const CLASS_PREFIX = new RegExp(
    "^[" + SPACE + "]*((?:[A-Za-z_]" + W + "*\\.)*([A-Za-z_]" + W + "*)): ?(.*)$", "su");
  const ID = /^[0-9a-f]{16}$/;
  const DOTTED = new RegExp("^[A-Za-z_]" + W + "*(?:\\.[A-Za-z_]" + W + "*)*$", "u");
  const STRIP = new RegExp("^[" + SPACE + "]+|[" + SPACE + "]+$", "g");
  const TRAILING_SPACE = new RegExp("[" + SPACE + "]+$");
  // The last part of what reads as a class name before a colon: CapWords.
  const CLASS_NAME = /^_*[A-Z]/;
  // Python's built-in exception classes (3.7 to 3.13): catalog/core/exceptions.py's
  // EVERY_BUILTIN_EXCEPTION (test_match_index.py holds the two lists equal).
  const BUILTIN_EXCEPTIONS = new Set([
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
    "BaseExceptionGroup", "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning",
    "ChildProcessError", "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError",
    "ConnectionResetError", "DeprecationWarning", "EOFError", "EncodingWarning",
    "EnvironmentError", "Exception", "ExceptionGroup", "FileExistsError", "FileNotFoundError",
    "FloatingPointError", "FutureWarning", "GeneratorExit", "IOError", "ImportError",
    "ImportWarning", "IndentationError", "IndexError", "InterruptedError", "IsADirectoryError",
    "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError", "ModuleNotFoundError",
    "NameError", "NotADirectoryError", "NotImplementedError", "OSError", "OverflowError",
    "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
    "PythonFinalizationError", "RecursionError", "ReferenceError", "ResourceWarning",
    "RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration", "SyntaxError",
    "SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError", "TypeError",
    "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError",
    "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning",
    "ZeroDivisionError",
  ]);
  const SEPARATOR_RUN = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^`{|}~]/g;
  // What bytes.split() splits on (the Python matcher splits UTF-8 bytes).
  const ASCII_SPACE = /[ \t\n\r\v\f]+/;
  // A lone surrogate becomes `?` (a separator) when Python encodes the text with "replace".
  const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

  function strip(text) {
    return text.replace(STRIP, "");
  }

  function words(text) {
    return text.replace(LONE_SURROGATE, " ").replace(SEPARATOR_RUN, " ").split(ASCII_SPACE)
      .filter(Boolean);
  }

  function codePoints(text) {
    return Array.from(text);
  }

  const ONE_SPACE = new RegExp("^[" + SPACE + "]$");

  function isWordChar(char) {
    return Boolean(char) && !ONE_SPACE.test(char) && !SEPARATOR_SET.has(char);
  }

  function escapeRegex(text) {
    return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
  }

  function compareIds(a, b) {
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  /* `public_rank` of extractor/imports.py: private parts of a dotted module, then its depth. */
  function publicRank(module) {
    const parts = (module || "").split(".").filter((part) => part);
    const isPrivate = (part) => part.startsWith("_") && part !== "__init__";
    return [parts.filter(isPrivate).length, parts.length];
  }

  /* `tie_order` of catalog/matching/messages.py: the more public module first, then the id. */
  function compareTies(a, b) {
    const [ap, ad] = publicRank(a.module);
    const [bp, bd] = publicRank(b.module);
    return ap - bp || ad - bd || compareIds(a, b);
  }

  /* The results with the most literal characters among readings of one line (`best` answers,
   * null for none), by id; an entry found twice is kept as first found; null when none. */
  function mostSpecific(...found) {
    const byId = new Map();
    for (const results of found) {
      for (const result of results || []) if (!byId.has(result.id)) byId.set(result.id, result);
    }
    if (!byId.size) return null;
    const top = Math.max(...[...byId.values()].map((r) => r.literalChars));
    return [...byId.values()].filter((r) => r.literalChars === top).sort(compareTies);
  }

  const MIN_LITERAL_CHARS = 8;
  const MAX_APPROXIMATE = 10;
  const BLANKS = new RegExp("[" + SPACE + "]+", "g");

  /* `fold`: ASCII capitals made small, and no other letter (Python folds the same ones). */
  function fold(text) {
    return text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
  }

  function truncated(text) {
    const points = codePoints(text);
    return points.length > MAX_LINE_CHARS ? points.slice(0, MAX_LINE_CHARS).join("") : text;
  }

  const MAX_PRINTED_STRINGS = 32;
  const SIMPLE_ESCAPES = { "\\": "\\", "'": "'", '"': '"', n: "\n", r: "\r", t: "\t" };
  const HEX_ESCAPES = { x: 2, u: 4, U: 8 };
  const HEX = /^[0-9a-fA-F]+$/;

  /* `printed_strings`: the values of the Python string literals in `text`, as repr writes them. */
  function printedStrings(text) {
    const found = [];
    let index = 0;
    while (found.length < MAX_PRINTED_STRINGS) {
      const starts = [text.indexOf("'", index), text.indexOf('"', index)].filter((at) => at >= 0);
      if (!starts.length) break;
      const start = Math.min(...starts);
      const quote = text[start];
      let value = "";
      index = start + 1;
      while (index < text.length && text[index] !== quote) {
        const char = text[index];
        if (char === "\\" && index + 1 < text.length) {
          const code = text[index + 1];
          if (Object.prototype.hasOwnProperty.call(SIMPLE_ESCAPES, code)) {
            value += SIMPLE_ESCAPES[code];
            index += 2;
            continue;
          }
          const width = HEX_ESCAPES[code] || 0;
          const digits = text.slice(index + 2, index + 2 + width);
          if (width && digits.length === width && HEX.test(digits) &&
              parseInt(digits, 16) <= 0x10ffff) {
            value += String.fromCodePoint(parseInt(digits, 16));
            index += 2 + width;
            continue;
          }
        }
        value += char;
        index += 1;
      }
      if (index >= text.length) break;
      found.push(value);
      index += 1;
    }
    return found;
  }

  /* `printed_variants`: a line that prints Python strings, read through each string's value
   * (after its `Class: ` prefix, kept). */
  function printedVariants(line) {
    const prefix = CLASS_PREFIX.exec(line);
    const head = prefix ? line.slice(0, line.length - prefix[3].length) : "";
    const body = strip(prefix ? prefix[3] : line);
    if (!body || !"'\"[{(".includes(body[0])) return [];
    return printedStrings(body).filter((value) => strip(value) !== "").map((value) => head + value);
  }

  /* One template, with what the Python matcher precomputes (catalog/matching/messages.py `_compile`). */
  class Template {
    constructor(row, index) {
      const [id, name, exception, module, anchor, pieces, part] = row;
      this.id = id;
      // The first line of a multi-line message, matched on its own (`first_line` in Python).
      this.part = part === 1;
      this.whole = null;
      this.name = name;
      this.exception = index.exceptions[exception][0];
      this.typed = index.exceptions[exception][1] === 1;
      this.module = index.modules[module];
      this.anchor = anchor;
      this.pieces = pieces;
      const literals = pieces.filter((_, i) => i % 2 === 0);
      const fields = pieces.length >> 1;
      this.literalChars = literals.reduce((sum, lit) => sum + codePoints(lit).length, 0);
      // Blanks ending the template are optional: pasting or logging a line loses them.
      const kept = literals[fields].replace(TRAILING_SPACE, "");
      const blanks = literals[fields].slice(kept.length);
      // Any literal piece must occur in a matching text: a cheap test before the regex.
      this.fragment = literals.slice(0, fields).concat([kept])
        .reduce((a, b) => (b.length > a.length ? b : a), "");
      this.startsWithField = fields > 0 && literals[0] === "";
      this.literals = literals;
      this.multiline = literals.some((literal) => literal.includes("\n"));
      this.kept = kept;
      this.blanks = blanks;
      this.beforeEdge = isWordChar(codePoints(literals[0])[0]);
      const last = codePoints(literals[fields]);
      this.afterEdge = last.length > 0 && isWordChar(last[last.length - 1]);
    }

    /* Python's `LiteralPattern.groups` (catalog/matching/messages.py), answering only whether it matches:
     * the literal pieces found in order with indexOf, each at its earliest place (no regex runs
     * over the text, so the work is linear in its length). `how`: 0 whole, 1 start, 2 anywhere. */
    matches(text, how) {
      const lits = this.literals;
      const last = lits.length - 1;
      const { kept, blanks } = this;
      const first = last ? lits[0] : kept;
      let solid = text.length;
      if (blanks) while (solid > 0 && ONE_SPACE.test(text[solid - 1])) solid--;
      const step = (i) => {
        const c = text.charCodeAt(i);
        return c >= 0xd800 && c < 0xdc00 && i + 1 < text.length &&
          (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? i + 2 : i + 1;
      };
      const edgeBefore = (at) => this.beforeEdge && at > 0 && isWordChar(text[at - 1]);
      const endsAt = (at) => {
        if (!text.startsWith(kept, at)) return false;
        const after = at + kept.length;
        if (blanks) return how === 0 ? after >= solid : text.startsWith(blanks, after) || after >= solid;
        if (how === 0) return after === text.length;
        return !(this.afterEdge && after < text.length && isWordChar(text[after]));
      };
      let at;
      if (how === 2) {
        at = text.indexOf(first);
        while (at >= 0 && edgeBefore(at)) at = text.indexOf(first, at + 1);
        if (at < 0) return false;
      } else if (text.startsWith(first)) at = 0;
      else return false;
      if (last === 0) {
        while (at >= 0) {
          if (endsAt(at)) return true;
          if (how !== 2) return false;
          at = text.indexOf(first, at + 1);
          while (at >= 0 && edgeBefore(at)) at = text.indexOf(first, at + 1);
        }
        return false;
      }
      let position = at + first.length;
      for (let i = 1; i < last; i++) {
        if (position >= text.length) return false;
        const found = text.indexOf(lits[i], step(position));
        if (found < 0) return false;
        position = found + lits[i].length;
      }
      if (position >= text.length) return false;
      const start = step(position);
      if (!kept && !blanks) return true;
      if (how === 0) {
        if (!kept) return Math.max(start, solid) <= text.length;
        const end = (blanks ? solid : text.length) - kept.length;
        return end >= start && endsAt(end);
      }
      if (!kept) return text.indexOf(blanks, start) >= 0 || Math.max(start, solid) <= text.length;
      let end = text.indexOf(kept, start);
      while (end >= 0 && !endsAt(end)) end = text.indexOf(kept, end + 1);
      return end >= 0;
    }

    fullmatch(text) {
      if (!text.includes(this.fragment)) return false;
      return this.matches(text, 0);
    }

    search(text) {
      if (!text.includes(this.fragment)) return false;
      // A leading placeholder absorbs whatever precedes the message: placed from the start.
      return this.matches(text, this.startsWithField ? 1 : 2);
    }

    /* What titles show: the message as the catalog writes it, or what stands for an empty one. */
    get headline() {
      if (this.whole) return this.whole.headline;
      const shown = this.pieces.map((piece, i) =>
        i % 2 === 0 ? piece.replace(/[{}]/g, "$&$&") : "{" + piece + "}").join("");
      return shown || this.exception.split(".").pop() + " without a message";
    }

    result(via) {
      return { id: this.id, name: this.name, exception: this.exception, module: this.module,
        typed: this.typed, headline: this.headline, literalChars: this.literalChars, via: via };
    }
  }

  /* `MessageMatcher` of catalog/matching/messages.py, over a loaded template index. */
  /* A dotted class name's package and class name: what a re-export keeps of it. */
  function classEnds(qualified) {
    const parts = qualified.split(".");
    return parts.length > 1 ? parts[0] + "." + parts[parts.length - 1] : qualified;
  }

  class Matcher {
    constructor(index) {
      if (!index || index.format !== FORMAT) throw new Error("not an errcat template index");
      this.index = index;
      this.module = index.module;
      this.built = new Array(index.entries.length).fill(null);
      this.folded = new Map();
      this.foldedAnchors = null;
      this.foldedStarts = null;
      this.byId = new Map();
      this.byName = new Map();
      this.byAnchor = new Map();
      this.byUntypedClass = new Map();
      this.byEnds = null;
      index.entries.forEach((row, i) => {
        const [id, name, exception, , anchor] = row;
        if (!this.byId.has(id)) this.byId.set(id, i);
        if (name && !this.byName.has(name)) this.byName.set(name, i);
        if (anchor !== null) {
          if (!this.byAnchor.has(anchor)) this.byAnchor.set(anchor, []);
          this.byAnchor.get(anchor).push(i);
        }
        const [qualified, typed] = index.exceptions[exception];
        if (typed !== 1 && row[6] !== 1) {
          if (!this.byUntypedClass.has(qualified)) this.byUntypedClass.set(qualified, []);
          this.byUntypedClass.get(qualified).push(i);
        }
      });
    }

    /* `MessageMatcher.untyped_class`: the class without generated classes a qualified name
       names, itself or the one with the same package and class name (a re-export's path). */
    untypedClass(qualified) {
      if (this.byUntypedClass.has(qualified)) return qualified;
      if (this.byEnds === null) {
        this.byEnds = new Map();
        for (const known of this.byUntypedClass.keys()) {
          const ends = classEnds(known);
          if (!this.byEnds.has(ends)) this.byEnds.set(ends, []);
          this.byEnds.get(ends).push(known);
        }
      }
      const found = this.byEnds.get(classEnds(qualified)) || [];
      return found.length === 1 ? found[0] : null;
    }

    get size() {
      return this.built.length;
    }

    template(i) {
      if (this.built[i]) return this.built[i];
      const template = (this.built[i] = new Template(this.index.entries[i], this.index));
      // Titled as its whole message, which is always the entry's first template.
      if (template.part) template.whole = this.template(this.byId.get(template.id));
      return template;
    }

    /* The entries `message` matches, best first (`MessageMatcher.match`). */
    match(message) {
      const lines = message.split(LINE_BREAK).filter((line) => strip(line) !== "");
      if (lines.length > 1) {
        const seen = new Map();
        for (const result of this.matchWhole(strip(message))) seen.set(result.id, result);
        for (const line of lines) {
          for (const result of this.matchPaste(strip(line))) {
            if (!seen.has(result.id)) seen.set(result.id, result);
          }
        }
        if (!message.includes('File "')) {
          // A value printed over several lines inside a one-line message: the lines as one.
          for (const result of this.matchPaste(lines.map((line) => strip(line)).join(" "))) {
            if (!seen.has(result.id)) seen.set(result.id, result);
          }
        }
        if (!seen.size) {
          for (const line of lines) {
            for (const result of this.approximate(strip(line))) {
              if (!seen.has(result.id)) seen.set(result.id, result);
            }
          }
          return [...seen.values()];
        }
        return [...seen.values()].sort((a, b) => b.literalChars - a.literalChars || compareTies(a, b));
      }
      const query = strip(message);
      const named = this.named(query);
      if (named.length) return named;
      const found = this.matchPaste(query);
      return found.length ? found : this.approximate(query);
    }

    /* `_approximate`: ASCII case ignored; failing that, templates whose literal start it is. */
    approximate(line) {
      line = truncated(line);
      const prefix = CLASS_PREFIX.exec(line);
      const text = fold(prefix ? strip(prefix[3]) : line);
      if (!text) return [];
      if (!this.foldedAnchors) {
        this.foldedAnchors = new Map();
        for (const [word, indices] of this.byAnchor) {
          const key = fold(word);
          if (!this.foldedAnchors.has(key)) this.foldedAnchors.set(key, []);
          this.foldedAnchors.get(key).push(...indices);
        }
      }
      const candidates = new Set();
      for (const word of new Set(words(text))) {
        for (const i of this.foldedAnchors.get(word) || []) candidates.add(i);
      }
      const ordered = [...candidates].sort((a, b) => a - b);
      for (const full of [true, false]) {
        let best = [];
        for (const i of ordered) {
          const template = this.template(i);
          if (!this.folded.has(i)) {
            const row = this.index.entries[i].slice();
            row[5] = row[5].map((piece, k) => (k % 2 === 0 ? fold(piece) : piece));
            this.folded.set(i, new Template(row, this.index));
          }
          const how = full ? 0 : template.startsWithField ? 1 : 2;
          if (!this.folded.get(i).matches(text, how)) continue;
          if (!best.length || template.literalChars > best[0].literalChars) best = [template];
          else if (template.literalChars === best[0].literalChars) best.push(template);
        }
        if (best.length) return best.map((t) => t.result("approximate")).sort(compareTies);
      }
      if (codePoints(text.replace(BLANKS, "")).length < MIN_LITERAL_CHARS) return [];
      return this.startingWith(text);
    }

    startingWith(text) {
      if (!this.foldedStarts) {
        this.foldedStarts = [];
        for (const indices of this.byAnchor.values()) {
          for (const i of indices) {
            const first = this.index.entries[i][5][0];
            if (first) this.foldedStarts.push([fold(first), i]);
          }
        }
      }
      const found = [];
      for (const [first, i] of this.foldedStarts) {
        if (!first.startsWith(text)) continue;
        // The cut must fall between words, not inside one.
        if (first.length > text.length && isWordChar(text[text.length - 1]) &&
            isWordChar(first[text.length])) continue;
        found.push(this.template(i));
      }
      found.sort((a, b) => a.literalChars - b.literalChars || compareIds(a, b));
      const results = new Map();
      for (const template of found) {
        if (results.size === MAX_APPROXIMATE) break;
        if (!results.has(template.id)) results.set(template.id, template.result("approximate"));
      }
      return [...results.values()];
    }

    /* `_match_whole`: the multi-line templates that several lines, as one text, match. */
    matchWhole(text) {
      text = truncated(text);
      const candidates = this.candidates(text).filter((i) => this.template(i).multiline);
      return this.best(text, candidates, true) || this.best(text, candidates, false) || [];
    }

    /* `_match_paste`: a line as written and through the Python strings it prints. */
    matchPaste(line) {
      const found = this.matchLine(line);
      const variants = printedVariants(truncated(line));
      if (!variants.length) return found;
      return mostSpecific(found, ...variants.map((variant) => this.matchLine(variant))) || [];
    }

    named(query) {
      if (ID.test(query) && this.byId.has(query)) {
        return [this.template(this.byId.get(query)).result("link")];
      }
      if (DOTTED.test(query)) {
        const defined = this.untypedClass(query);
        const ofClass = (defined === null ? [] : this.byUntypedClass.get(defined))
          .map((i) => this.template(i).result("class")).sort(compareTies);
        if (ofClass.length) return ofClass;
        const named = this.byName.get(query.split(".").pop());
        if (named !== undefined) return [this.template(named).result("class")];
      }
      return [];
    }

    matchLine(text) {
      const points = codePoints(text);
      if (points.length > MAX_LINE_CHARS) text = points.slice(0, MAX_LINE_CHARS).join("");
      if (!text) return [];
      const link = LINK.exec(text);
      if (link && this.byId.has(link[1])) {
        return [this.template(this.byId.get(link[1])).result("link")];
      }
      const prefix = CLASS_PREFIX.exec(text);
      if (prefix) {
        const [, qualified, name] = prefix;
        const rest = strip(prefix[3]);
        const named = this.byName.get(name);
        if (named !== undefined && this.template(named).typed) {
          return [this.template(named).result("class")];
        }
        const narrowed = this.ofClass(qualified, named, rest);
        let found = narrowed.length
          ? this.best(rest, narrowed, true) || this.best(rest, narrowed, false) || []
          : [];
        if (found.length) return found;
        const candidates = this.candidates(rest);
        if (!(this.untypedClass(qualified) !== null || named !== undefined ||
              (CLASS_NAME.test(name) &&
               (qualified.includes(".") || BUILTIN_EXCEPTIONS.has(name))))) {
          // `torch.nn.functional: bad value`: the text before the colon may be the message's
          // own, so the whole line competes with the text after the colon.
          const whole = this.candidates(text);
          return mostSpecific(this.best(rest, candidates, true), this.best(text, whole, true)) ||
            mostSpecific(this.best(rest, candidates, false), this.best(text, whole, false)) || [];
        }
        found = this.best(rest, candidates, true) || this.best(rest, candidates, false);
        if (found) return found;
      }
      const candidates = this.candidates(text);
      return this.best(text, candidates, true) || this.best(text, candidates, false) || [];
    }

    ofClass(qualified, named, rest) {
      const defined = this.untypedClass(qualified) || qualified;
      const picked = this.candidates(rest).filter((i) => this.template(i).exception === defined);
      picked.push(...(this.byUntypedClass.get(defined) || []));
      if (named !== undefined) picked.push(named);
      return [...new Set(picked)];
    }

    candidates(text) {
      const found = [];
      for (const word of new Set(words(text))) {
        const indices = this.byAnchor.get(word);
        if (indices) found.push(...indices);
      }
      return found;
    }

    /* The most specific matches among `candidates`, by id; null when none matches. */
    best(text, candidates, full) {
      let best = [];
      for (const i of candidates) {
        const template = this.template(i);
        if (!(full ? template.fullmatch(text) : template.search(text))) continue;
        if (!best.length || template.literalChars > best[0].literalChars) best = [template];
        else if (template.literalChars === best[0].literalChars) best.push(template);
      }
      if (!best.length) return null;
      return best.map((t) => t.result("message")).sort(compareTies);
    }
  }

  /* ---- The raise site a pasted traceback names (catalog/matching/frames.py) ------------ */

  const FRAME = /File "([^"\r\n]+)", line (\d+)/g;

  /* `package_path`: `path` from its last folder named `name` on, or null. */
  function packagePath(path, name) {
    const parts = path.replace(/\\/g, "/").split("/");
    for (let i = parts.length - 2; i >= 0; i--) {
      if (parts[i] === name) return parts.slice(i).join("/");
    }
    return null;
  }

  /* `source_anchor`: the page anchor of the raise site at `path:line` of an entry of `module`. */
  function sourceAnchor(path, line, module) {
    const inside = packagePath(path, module.split(".")[0]);
    if (inside === null) return null;
    return "at-" + inside.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "") + "-" + line;
  }

  /* `raised_at`: the anchor of the innermost frame of `text` in the package of `module`, or
     of the innermost one among `calls` (the entry's sources that call a raise helper, whose
     own raise is the innermost frame of what they raise). */
  function raisedAt(text, module, calls) {
    const frames = [...text.matchAll(FRAME)];
    const called = calls || [];
    let innermost = null;
    for (let i = frames.length - 1; i >= 0; i--) {
      const anchor = sourceAnchor(frames[i][1], Number(frames[i][2]), module);
      if (anchor === null) continue;
      if (called.includes(anchor)) return anchor;
      if (innermost === null) {
        innermost = anchor;
        if (!called.length) break;
      }
    }
    return innermost;
  }

  /* ---- Material's search box ---------------------------------------------------------- */

  function element(doc, tag, attributes, children) {
    const node = doc.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
    for (const child of children || []) {
      node.append(typeof child === "string" ? doc.createTextNode(child) : child);
    }
    return node;
  }

  function code(doc, text) {
    const node = element(doc, "code", {}, [text]);
    // errcat.js's break opportunities after `/`, `.` and `_` for a long name (on the site).
    if (typeof window !== "undefined" && typeof window.errcatWrapElement === "function") {
      window.errcatWrapElement(node);
    }
    return node;
  }

  /* One result in the markup of Material's own items (templates/search/index.tsx). */
  function resultItem(doc, result, url, rank, module) {
    const className = result.typed ? module + "." + result.name : result.exception;
    const about = [code(doc, className)];
    if (result.typed) about.push(" (", code(doc, result.exception), ")");
    about.push(" in ", code(doc, result.module));
    // Material's Enter key opens the result with the highest score: the best match.
    const score = (1e9 - rank).toFixed(2);
    return element(doc, "li", { class: "md-search-result__item errcat-match" }, [
      element(doc, "a", { href: url, class: "md-search-result__link", tabindex: "-1" }, [
        element(doc, "article", { class: "md-search-result__article md-typeset",
          "data-md-score": score }, [
          element(doc, "div", { class: "md-search-result__icon md-icon" }),
          element(doc, "h1", {}, [result.headline]),
          element(doc, "p", {}, about),
        ]),
      ]),
    ]);
  }

  function withoutQuery(href) {
    const url = new URL(href);
    url.search = "";
    url.hash = "";
    return url.href;
  }

  /* Wire the matcher into Material's search box on `doc`; `script` is this file's element. */
  function attach(doc, script) {
    const indexUrl = new URL(
      (script && script.dataset.index) || "search/errcat-match.json", doc.baseURI);
    const siteRoot = new URL("../", indexUrl);
    let loading = null;
    let matcher = null;
    let shown = { query: null, items: [], urls: new Set() };
    let pasted = null;

    function load() {
      if (!loading) {
        loading = fetch(indexUrl, { credentials: "same-origin" })
          .then((response) => {
            if (!response.ok) throw new Error(indexUrl + ": " + response.status);
            return response.json();
          })
          .then((index) => {
            matcher = new Matcher(index);
            doc.dispatchEvent(new CustomEvent("errcat:match-index", { detail: matcher }));
            update();
          })
          .catch((error) => {
            // Word search still works; say why the error search does not.
            console.warn("errcat: no error search:", error);
          });
      }
      return loading;
    }

    function input() {
      return doc.querySelector("input.md-search__input");
    }

    function list() {
      return doc.querySelector(".md-search-result__list");
    }

    /* What to match: the input's text, or the clipboard's lines when the input holds exactly
       what a paste left there (an <input> drops the line breaks of a pasted traceback). */
    function query() {
      const value = input() ? input().value : "";
      if (pasted && pasted.value === value) return pasted.text;
      return value;
    }

    function update() {
      const target = list();
      if (!matcher || !target) return;
      const text = query();
      if (text !== shown.query) {
        const results = strip(text) ? matcher.match(text).slice(0, SHOWN) : [];
        const items = results.map((result, rank) => {
          // A traceback's frame in the package opens the page at that raise site.
          const calls = (matcher.index.calls || {})[result.id];
          const anchor = text.includes('File "') ? raisedAt(text, result.module, calls) : null;
          const page = new URL("errors/" + result.id + "/", siteRoot).href;
          return resultItem(doc, result, anchor ? page + "#" + anchor : page, rank, matcher.module);
        });
        shown = { query: text, items: items,
          urls: new Set(items.map((item) => withoutQuery(item.firstChild.href))) };
      }
      place(target);
    }

    /* Put the current matches first in the list, drop Material's items for the same pages;
       changes nothing when the list is already so (the observer sees its own changes too). */
    function place(target) {
      const items = shown.items;
      items.forEach((item, i) => {
        if (target.children[i] !== item) target.insertBefore(item, target.children[i] || null);
      });
      for (const child of [...target.children]) {
        if (items.includes(child)) continue;
        if (child.classList.contains("errcat-match")) {
          child.remove();
          continue;
        }
        const link = child.querySelector("a[href]");
        if (link && shown.urls.has(withoutQuery(link.href))) child.remove();
      }
      const meta = doc.querySelector(".md-search-result__meta");
      const others = target.children.length - items.length;
      if (meta && items.length && others === 0) {
        const text = items.length === 1 ? "1 matching error" : items.length + " matching errors";
        if (meta.textContent !== text) meta.textContent = text;
      }
    }

    function start() {
      const box = input();
      const target = list();
      if (!box || !target) return;
      box.addEventListener("focus", load);
      box.addEventListener("input", () => {
        if (pasted && pasted.value !== box.value) pasted = null;
        if (matcher) update();
        else load();
      });
      box.addEventListener("paste", (event) => {
        const text = event.clipboardData ? event.clipboardData.getData("text") : "";
        // Read after the browser has put the pasted text in.
        setTimeout(() => {
          pasted = /[\r\n]/.test(text) && box.value === text.replace(/[\r\n]/g, "")
            ? { text: text, value: box.value } : null;
          if (matcher) update();
        }, 0);
      });
      new MutationObserver(() => {
        if (matcher) update();
      }).observe(target, { childList: true });
      if (doc.activeElement === box) load();
    }

    if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", start);
    else start();
  }

  return {
    Matcher: Matcher, words: words, attach: attach, FORMAT: FORMAT,
    sourceAnchor: sourceAnchor, raisedAt: raisedAt,
  };
});
