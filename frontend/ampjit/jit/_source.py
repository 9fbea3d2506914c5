"""Source text for the script compiler: a function's or method's source cut out of its file with
its real file name and first line (so diagnostics point at the user's file:line), and the block
scanning that finds where a definition ends (strings and brackets included)."""
import inspect
import linecache

def _indent_of(line):
    return len(line) - len(line.lstrip())


def _function_source(fn, keep_decorators=False):
    """(dedented text of fn's `def`; filename; its first line). Decorators are left out, as torch
    ignores them, unless `keep_decorators` (autocast decorators, which the compiler decides on).
    Read from linecache and cut by indentation; inspect.getsource where that fails."""
    code = fn.__code__
    filename = code.co_filename
    lines = linecache.getlines(filename, fn.__globals__)
    start = code.co_firstlineno - 1
    text = None
    if 0 <= start < len(lines):
        # Every line up to the last one the code object has instructions on is in the body: only
        # the lines after it need scanning for the block's end (linear in the tail, not the body).
        last = max((ln for _, _, ln in code.co_lines() if ln is not None), default=0) - 1
        text, first = _cut_block(lines, start, keep_decorators, body_until=last)
    if text is None:
        src, lnum = inspect.getsourcelines(fn)  # OSError when there is none
        text, first = _cut_block(src, 0, keep_decorators)
        if text is None:
            raise OSError("could not find the def of '{}'".format(fn.__qualname__))
        first += lnum - 1
    return text, filename, first + 1


def _cut_block(lines, start, keep_decorators=False, body_until=-1):
    """The block of the `def` at or after lines[start] (from its decorators there when
    `keep_decorators`), dedented, and the index of its first line; None when no def starts
    there."""
    i = start
    n = len(lines)
    while i < n:
        s = lines[i].lstrip()
        if s.startswith("def ") or s.startswith("async def "):
            break
        if not (s.startswith("@") or s == "" or s.startswith("#") or s[:1] in ")]}" or _indent_of(lines[i]) >
                _indent_of(lines[start])):
            return None, 0
        i += 1
    if i == n:
        return None, 0
    def_line = i
    indent = _indent_of(lines[i])
    end = i + 1
    depth = _bracket_depth(lines[i], 0)
    in_string = _toggles_string(lines[i], None)
    last_code = i
    if body_until > end and body_until < n and _indent_of(lines[body_until]) > indent:
        end = last_code = body_until
        depth, in_string = 0, None
    while end < n:
        line = lines[end]
        stripped = line.strip()
        if in_string is None and depth == 0 and stripped and not stripped.startswith("#") \
                and _indent_of(line) <= indent and stripped[:1] not in ")]}":
            break
        if in_string is None:
            depth = _bracket_depth(line, depth)
        in_string = _toggles_string(line, in_string)
        if stripped and not stripped.startswith("#"):
            last_code = end
        end += 1
    first = start if keep_decorators else def_line
    # Kept indented: the compiler dedents it and reports the user's columns (Source::dedented).
    text = "".join(lines[first:last_code + 1])
    if not text.endswith("\n"):
        text += "\n"
    return text, first


def _toggles_string(line, open_quote):
    """Tracks triple-quoted strings across lines: the quote still open after `line`, or None."""
    pos = 0
    while True:
        if open_quote is None:
            a, b = line.find('"""', pos), line.find("'''", pos)
            cands = [x for x in (a, b) if x >= 0]
            if not cands:
                return None
            k = min(cands)
            open_quote = line[k:k + 3]
            pos = k + 3
        else:
            k = line.find(open_quote, pos)
            if k < 0:
                return open_quote
            open_quote = None
            pos = k + 3


def _bracket_depth(line, depth):
    """Bracket nesting after `line` (ignoring brackets in comments and one-line strings, roughly)."""
    quote = None
    for ch in line:
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return depth
