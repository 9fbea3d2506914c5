"""torch.testing.FileCheck: checks that text (a graph's printout, usually) holds literal patterns in
order, with torch's chainable API and matching rules (torch/csrc/jit/testing/file_check.cpp).

Note [Two FileChecks]
runtime/ir/filecheck.cpp is the driver of ampjit's own golden tests (LLVM's rules: {{regex}}
blocks, CHECK-NEXT by line number). This class is torch's API for user test code, whose rules
differ (plain text only, CHECK-SAME, CHECK-COUNT-EXACTLY, CHECK-DAG, the search resuming where
the previous match ended); the two are kept apart rather than one bent to the other's rules.
"""

_CHECK, _NEXT, _SAME, _NOT, _COUNT, _DAG = "CHECK", "CHECK-NEXT", "CHECK-SAME", "CHECK-NOT", "CHECK-COUNT", "CHECK-DAG"

# The directive suffixes run(checks, text) reads after "# CHECK" (count is parsed apart).
_DIRECTIVES = ((": ", _CHECK), ("-NEXT: ", _NEXT), ("-SAME: ", _SAME), ("-NOT: ", _NOT), ("-DAG: ", _DAG))


class _Check:
    def __init__(self, kind, pattern, count=None):
        self.kind, self.pattern, self.count = kind, pattern, count

    def __str__(self):
        kind = "{}-{}".format(_COUNT, self.count) if self.kind == _COUNT else self.kind
        return "{}: {}".format(kind, self.pattern)


def _quoted(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def _highlight(text, start, end):
    """The line holding text[start:end], two lines of context either side, and a row of ~ under the
    range (at least one character) marked "<--- HERE", as torch's SourceRange.highlight."""
    lines = text.split("\n")
    row = text.count("\n", 0, start)
    col = start - (text.rfind("\n", 0, start) + 1)
    width = max(1, min(end - start, len(lines[row]) - col))
    shown = lines[max(0, row - 2):row + 1] + [" " * col + "~" * width + " <--- HERE"] + lines[row + 1:row + 3]
    return "\n".join(shown).rstrip("\n") + "\n"


def _fail_find(text, start, check, pattern=None):
    pattern = check.pattern if pattern is None else pattern
    raise RuntimeError("Expected to find {} but did not find it\nSearched string:\n{}From {}\n".format(
        _quoted(pattern), _highlight(text, start, start + len(pattern)), check))


def _find(text, pattern, start, check, end=None):
    """The position of `pattern` in text[start:end], else RuntimeError naming `check`."""
    pos = text.find(pattern, start)
    if pos == -1 or (end is not None and pos + len(pattern) > end):
        _fail_find(text, start, check, pattern)
    return pos


def _assert_not_found(text, pattern, start, end, check):
    pos = text.find(pattern, start)
    if pos != -1 and pos + len(pattern) <= end:
        raise RuntimeError("Expected to not find {} but found it\n{}From {}\n".format(
            _quoted(pattern), _highlight(text, pos, pos + len(pattern)), check))


class FileCheck:
    """torch.testing.FileCheck: ``FileCheck().check("aten::mm").check_not("aten::to")
    .check_next("return").run(graph)``. Each check searches from where the previous one matched:

    - check(s): s occurs;
    - check_next(s): s occurs on the line after the previous match;
    - check_same(s): s occurs on the line of the previous match;
    - check_not(s): s does not occur between the previous match and the next check's match (the end
      of the text if no check follows);
    - check_count(s, count, exactly=False): s occurs `count` times, one after another; with
      exactly, no more occurrences follow;
    - check_dag(s): consecutive check_dags match in any order.

    ``run(text)`` runs the checks on a string or on any object whose str() is the text (a graph),
    raising RuntimeError that names the failing check and shows where the search was.
    ``run(checks, text)`` first adds the checks written as ``# CHECK: s``, ``# CHECK-NEXT: s``,
    ``# CHECK-SAME: s``, ``# CHECK-NOT: s``, ``# CHECK-DAG: s``, ``# CHECK-COUNT-2: s`` and
    ``# CHECK-COUNT-EXACTLY-2: s`` lines in `checks`. See Note [Two FileChecks]."""

    def __init__(self):
        self._groups = []  # consecutive check_nots (and check_dags) form one group, as in torch

    def _add(self, kind, pattern, count=None):
        check = _Check(kind, pattern, count)
        if self._groups and kind in (_NOT, _DAG) and self._groups[-1][0].kind == kind:
            self._groups[-1].append(check)
        else:
            self._groups.append([check])
        return self

    def check(self, s):
        return self._add(_CHECK, s)

    def check_next(self, s):
        return self._add(_NEXT, s)

    def check_same(self, s):
        return self._add(_SAME, s)

    def check_not(self, s):
        return self._add(_NOT, s)

    def check_dag(self, s):
        return self._add(_DAG, s)

    def check_count(self, s, count, exactly=False):
        if count == 0 and not exactly:
            raise RuntimeError("check_count: count == 0 without exactly=True checks nothing")
        if count:
            self._add(_COUNT, s, count)
        if exactly:
            self._add(_NOT, s)
        return self

    def run(self, checks_or_text, text=None):
        if text is None:
            text = checks_or_text
        else:
            self._parse(checks_or_text)
        if not isinstance(text, str):
            text = str(text)
        if not self._groups:
            raise RuntimeError("No checks have been added to this instance of FileCheck! Check for bad input.")
        prev = (0, 0)
        i = 0
        while i < len(self._groups):
            group = self._groups[i]
            if group[0].kind != _NOT:
                prev = self._match(group, text, prev)
            elif i + 1 < len(self._groups):
                after = self._match(self._groups[i + 1], text, prev)
                for check in group:
                    _assert_not_found(text, check.pattern, prev[1], after[0], check)
                prev = after
                i += 1
            else:
                for check in group:
                    _assert_not_found(text, check.pattern, prev[1], len(text), check)
            i += 1

    @staticmethod
    def _match(group, text, prev):
        """The (start, end) range the group matched, searching from the previous match's end."""
        start = prev[1]
        check = group[0]
        if check.kind == _DAG:
            starts, ends = [], []
            for c in group:
                pos = _find(text, c.pattern, start, c)
                starts.append(pos)
                ends.append(pos + len(c.pattern))
            return min(starts), max(ends)
        if check.kind == _CHECK:
            pos = _find(text, check.pattern, start, check)
        elif check.kind == _SAME:
            pos = _find(text, check.pattern, start, check)
            if "\n" in text[start:pos]:
                raise RuntimeError(
                    "Expected to find {} on the line of the previous match, but its first occurrence after it is "
                    "on a later line\n{}From {}\n".format(
                        _quoted(check.pattern), _highlight(text, pos, pos + len(check.pattern)), check))
        elif check.kind == _NEXT:
            line_end = text.find("\n", start)
            if line_end == -1:
                raise RuntimeError("Expected to find {} on the line after the previous match, but the previous "
                                   "match is on the last line\n{}From {}\n".format(
                                       _quoted(check.pattern), _highlight(text, start, start), check))
            pos = _find(text, check.pattern, line_end + 1, check)
            if "\n" in text[line_end + 1:pos]:
                raise RuntimeError(
                    "Expected to find {} on the line after the previous match, but its first occurrence there or "
                    "after is on a later line\n{}From {}\n".format(
                        _quoted(check.pattern), _highlight(text, pos, pos + len(check.pattern)), check))
        else:  # _COUNT
            first = None
            for _ in range(check.count):
                pos = _find(text, check.pattern, start, check)
                first = pos if first is None else first
                start = pos + len(check.pattern)
            return first, start
        return pos, pos + len(check.pattern)

    def _parse(self, checks):
        """Adds the checks written as "# CHECK...: pattern" lines (torch's parseStrings)."""
        for line in checks.splitlines():
            hash_pos = line.find("#")
            while hash_pos != -1:
                rest = line[hash_pos + 1:].lstrip(" \t")
                if rest.startswith("CHECK"):
                    break
                hash_pos = line.find("#", hash_pos + 1)
            if hash_pos == -1:
                continue
            rest = rest[len("CHECK"):]
            if rest.startswith("-COUNT-"):
                spec, sep, pattern = rest[len("-COUNT-"):].partition(": ")
                exactly = spec.startswith("EXACTLY-")
                count = spec[len("EXACTLY-"):] if exactly else spec
                if not sep or not count.isdigit():
                    raise RuntimeError("Could not parse check at:\n{}\nCheck for bad input.".format(line))
                self.check_count(pattern, int(count), exactly)
                continue
            for suffix, kind in _DIRECTIVES:
                if rest.startswith(suffix):
                    self._add(kind, rest[len(suffix):])
                    break
            else:
                raise RuntimeError("Could not parse check at:\n{}\nCheck for bad input.".format(line))
