#!/usr/bin/env python3
"""Checks the project's size rule: no function over 80 lines, no file over 600 lines, in the C
(.c, .h) and Elixir (.ex, .exs) sources of the folders given, save the exceptions written down
in the allow-list, each with its reason.

  tools/check-sizes.py [--allow FILE] [DIR ...]     default: src c_src reference tools lib
  tools/check-sizes.py --self-test                  the parsers on cases that could fool them
                                                    (every run starts with it)

A function is counted from the line of its name to the line of its closing brace (C) or its
`end` (Elixir; `def ..., do:` forms up to the next line indented no deeper than the def); a
file by its lines. C functions are found by matching braces after comments, strings and
preprocessor lines are blanked (each branch of a conditional read from the depth its #if
started at); an Elixir clause (def, defp, defmacro, defmacrop, defguard,
defguardp) by matching its do with its end, skipping strings, heredocs, sigils, char literals,
atoms and keyword keys.

The allow-list (default tools/check-sizes.allow) has one exception a line:
  PATH  REASON              a file allowed over 600 lines
  PATH:FUNCTION  REASON     a function (every clause of that name, in Elixir) over 80 lines
An entry without a reason, or that no longer matches anything over a limit, is a finding too, so
the list stays true. Exit status 1 with one line per finding, 0 when there is none."""
import bisect
import os
import re
import sys

FUNCTION_LIMIT = 80
FILE_LIMIT = 600
DIRS = ["src", "c_src", "reference", "tools", "lib"]
ALLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-sizes.allow")
C_EXT = (".c", ".h")
DIRECTIVE = re.compile(r"#\s*(\w*)")
LINKAGE = re.compile(r"(^|\s)extern\s*\"\s*\"\s*$")  # extern "C" {, its string blanked
EX_EXT = (".ex", ".exs")


# --- C -----------------------------------------------------------------------------------

def c_blank(text):
    """The text with comments, string and char literals and preprocessor lines replaced by
    spaces (newlines kept, so that offsets keep their line numbers), and {offset: directive}
    for the conditionals (#if..., #elif, #else, #endif) among those lines."""
    out, i, n = [], 0, len(text)
    at_line_start, conditionals = True, {}
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a directive, with its continuation lines: its braces are a macro's, not code's
            word = DIRECTIVE.match(text, i).group(1)
            if word.startswith("if") or word in ("elif", "else", "endif"):
                conditionals[i] = "if" if word.startswith("if") else word
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    out.append(" \n")
                    j += 2
                    continue
                if text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    k = n if k < 0 else k + 2
                    out.append(re.sub(r"[^\n]", " ", text[j:k]))
                    j = k
                    continue
                out.append(" ")
                j += 1
            i = j
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        at_line_start = c == "\n"
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out), conditionals


def c_function_name(head):
    """(name, its offset in head) of the function whose header (the text since the last
    top-level ; or }) is head, or None when the brace that follows opens something else
    (struct, initializer)."""
    h = head.rstrip()
    if not h.endswith(")") or re.match(r"\s*(typedef|struct|union|enum)\b", h) or "=" in h:
        return None
    depth = 0
    for k in range(len(h) - 1, -1, -1):
        if h[k] == ")":
            depth += 1
        elif h[k] == "(":
            depth -= 1
            if depth == 0:
                m = re.search(r"([A-Za-z_]\w*)\s*$", h[:k])
                return (m.group(1), m.start(1)) if m else None
    return None


def c_functions(text):
    """(name, first line, last line) of each function defined in text. Every branch of a
    conditional is read, each from the brace depth its #if started at, and the first branch's
    depth goes on after #endif: two branches may each open the same block. The braces of
    extern "C" { ... } are not a level: what they hold is at the top."""
    code, conditionals = c_blank(text)
    found, depth, head_start, opened, frames, linkage = [], 0, 0, None, [], 0
    for i, c in enumerate(code):
        if i in conditionals:
            d = conditionals[i]
            if d == "if":
                frames.append([depth, None])
            elif frames and d in ("elif", "else"):
                if frames[-1][1] is None:
                    frames[-1][1] = depth
                depth = frames[-1][0]
            elif frames and d == "endif":
                _, first = frames.pop()
                depth = depth if first is None else first
        elif c == "{" and depth == 0 and LINKAGE.search(code[head_start:i]):
            linkage += 1
            head_start = i + 1
        elif c == "}" and depth == 0 and linkage:
            linkage -= 1
            head_start = i + 1
        elif c == "{":
            if depth == 0:
                named = c_function_name(code[head_start:i])
                if named:
                    at = head_start + named[1]
                    opened = (named[0], code.count("\n", 0, at) + 1)
                else:
                    opened = None
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                if opened:
                    found.append((opened[0], opened[1], code.count("\n", 0, i) + 1))
                opened = None
                head_start = i + 1
        elif c == ";" and depth == 0:
            head_start = i + 1
    return found


# --- Elixir ------------------------------------------------------------------------------

DEFS = {"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp"}
PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[?!]?")


def ex_skip_quoted(text, i, close, interpolate=True):
    """The index just past the string body starting at i that ends with close (a character
    or a heredoc's triple quote); #{...} interpolations are skipped whole."""
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
        elif text.startswith(close, i):
            return i + len(close)
        elif interpolate and text.startswith("#{", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text[i] == '"':
                    i = ex_skip_quoted(text, i + 1, '"')
                    continue
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
        else:
            i += 1
    return n


def ex_skip_sigil(text, i):
    """i is just past '~': the index past the sigil's letters, body and modifiers."""
    n = len(text)
    j = i
    while j < n and text[j].isalpha():
        j += 1
    interpolate = j > i and text[i].islower()
    for q in ('"""', "'''"):
        if text.startswith(q, j):
            j = ex_skip_quoted(text, j + 3, q, interpolate)
            break
    else:
        if j >= n:
            return n
        opener = text[j]
        close = PAIRS.get(opener, opener)
        j = ex_skip_quoted(text, j + 1, close, interpolate)
    while j < n and text[j].isalpha():
        j += 1
    return j


def ex_tokens(text):
    """The tokens that shape blocks: (kind, line, indent of its line, name) with kind 'def'
    (name: the function's), 'do' (a block's), 'kwdo' (a `do:` keyword), 'fn', 'end'."""
    newlines = [k for k, ch in enumerate(text) if ch == "\n"]
    toks, i, n = [], 0, len(text)

    def where(at):
        line = bisect.bisect_left(newlines, at)
        begin = newlines[line - 1] + 1 if line else 0
        lead = text[begin:at]
        return line + 1, len(lead) - len(lead.lstrip())

    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith('"""', i) or text.startswith("'''", i):
            i = ex_skip_quoted(text, i + 3, text[i:i + 3])
        elif c in "\"'":
            i = ex_skip_quoted(text, i + 1, c)
        elif c == "~" and i + 1 < n and text[i + 1].isalpha():
            i = ex_skip_sigil(text, i + 1)
        elif c == "?" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            i += 3 if text.startswith("?\\", i) else 2
        elif c == ":" and i + 1 < n and text[i + 1] == '"':
            i = ex_skip_quoted(text, i + 2, '"')
        elif c == ":" and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] == "_") \
                and not (i > 0 and text[i - 1] == ":"):
            i = IDENT.match(text, i + 1).end()  # an atom such as :do or :end
        elif c.isalpha() or c == "_":
            start = i
            m = IDENT.match(text, i)
            word, i = m.group(0), m.end()
            keyword = i < n and text[i] == ":" and not text.startswith("::", i)
            if start > 0 and text[start - 1] == ".":
                continue  # a field or a remote call: x.end, Kernel.def
            if word == "do":
                toks.append(("kwdo" if keyword else "do",) + where(start) + (None,))
            elif keyword:
                continue
            elif word in ("fn", "end"):
                toks.append((word,) + where(start) + (None,))
            elif word in DEFS:
                m2 = re.compile(r"\s*(" + IDENT.pattern + ")").match(text, i)
                toks.append(("def",) + where(start) + (m2.group(1) if m2 else "?",))
        else:
            i += 1
    return toks


def ex_keyword_end(lines, first, indent):
    """The last line of a `def ..., do:` clause starting at line first (1-based): the line
    before the next non-blank line indented no deeper than the def (or the file's end)."""
    last = first
    for k in range(first, len(lines)):
        s = lines[k]
        if not s.strip():
            continue
        if len(s) - len(s.lstrip()) <= indent:
            break
        last = k + 1
    return last


def ex_functions(text):
    """(name, first line, last line) of each function clause defined in text."""
    toks, lines, found = ex_tokens(text), text.split("\n"), []
    for k, (kind, line, indent, name) in enumerate(toks):
        if kind != "def":
            continue
        depth = 0
        for j in range(k + 1, len(toks)):
            kj = toks[j][0]
            if depth == 0 and kj in ("def", "end"):
                break  # a bodyless head (defaults, or a protocol's), or its module's end
            if depth == 0 and kj == "kwdo":
                found.append((name, line, ex_keyword_end(lines, line, indent)))
                break
            if kj in ("do", "fn"):
                if depth == 0 and kj == "do":
                    end = ex_matching_end(toks, j)
                    if end:
                        found.append((name, line, end))
                    break
                depth += 1
            elif kj == "end":
                depth -= 1
    return found


def ex_matching_end(toks, j):
    depth = 0
    for kind, line, _, _ in toks[j:]:
        if kind in ("do", "fn"):
            depth += 1
        elif kind == "end":
            depth -= 1
            if depth == 0:
                return line
    return None


# --- the parsers on what could fool them --------------------------------------------------

SELF_C = r"""
#define BLOCK(x) do { x; } while (0)
struct s { int a; };
static const int table[] = { 1, 2 };
/* } a comment's brace */
static int
one(int a,
    int b) {
    const char *s = "}{";
    char c = '}';
#if defined(X)
    if (a) {
#else
    if (b) {
#endif
        return c; // }
    }
    return s[0];
}
int two(void) { return 0; }
#ifdef __cplusplus
extern "C" {
#endif
static inline int three(void) {
  return 3;
}
#ifdef __cplusplus
}
#endif
"""
SELF_EX = r'''
defmodule M do
  @moduledoc """
  def hidden do
    end
  """
  def one(a, b \\ 1)

  def one(a, b) do
    f = fn x -> x end
    s = "end #{inspect(a, do: 1)} do"
    r = ~r/do|end/
    w = ~w(do end)
    c = ?e
    k = [do: :end, end: 1]
    if a, do: b, else: f.(s)
    case {r, w, c, k} do
      _ -> a.end
    end
  end

  defp two(x),
    do: x

  def three, do: :ok
end
'''


def self_test():
    want_c = [("one", 7, 19), ("two", 20, 20), ("three", 24, 26)]
    want_ex = [("one", 9, 20), ("two", 22, 23), ("three", 25, 25)]
    got_c, got_ex = c_functions(SELF_C), ex_functions(SELF_EX)
    bad = [f"C: want {want_c}, got {got_c}"] if got_c != want_c else []
    bad += [f"Elixir: want {want_ex}, got {got_ex}"] if got_ex != want_ex else []
    for b in bad:
        print("check-sizes self-test: " + b)
    return 1 if bad else 0


# --- the rule ----------------------------------------------------------------------------

def sources(dirs):
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            subdirs.sort()
            for f in sorted(files):
                if f.endswith(C_EXT + EX_EXT):
                    yield os.path.join(root, f)


def read_allow(path):
    allow, problems = {}, []
    if not os.path.exists(path):
        return allow, problems
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            s = raw.strip()
            if not s or s.startswith("#"):
                continue
            parts = s.split(None, 1)
            if len(parts) < 2:
                problems.append(f"{path}:{no}: {parts[0]} has no reason")
                continue
            allow[parts[0]] = (no, parts[1])
    return allow, problems


def main(argv):
    allow_path, dirs = ALLOW, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--self-test":
            return self_test()
        if a == "--allow" and args:
            allow_path = args.pop(0)
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            dirs.append(a.rstrip("/"))
    dirs = dirs or DIRS
    if self_test():
        return 1  # the parsers are wrong: their answers would be too
    allow, findings = read_allow(allow_path)
    used = set()
    for path in sources(dirs):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if nlines > FILE_LIMIT:
            if path in allow:
                used.add(path)
            else:
                findings.append(f"{path}: {nlines} lines (limit {FILE_LIMIT})")
        funcs = c_functions(text) if path.endswith(C_EXT) else ex_functions(text)
        for name, first, last in funcs:
            length = last - first + 1
            if length <= FUNCTION_LIMIT:
                continue
            key = f"{path}:{name}"
            if key in allow:
                used.add(key)
            else:
                findings.append(f"{path}:{first}: {name} is {length} lines (limit "
                                f"{FUNCTION_LIMIT})")
    for key, (no, _) in sorted(allow.items(), key=lambda kv: kv[1][0]):
        inside = any(key == d or key.startswith(d + "/") for d in dirs)
        if inside and key not in used:
            findings.append(f"{allow_path}:{no}: {key} is within the limits now: remove it "
                            "from the allow-list")
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
