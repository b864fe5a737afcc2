"""openmetrics.py: a checker of the OpenMetrics text exposition format.

batch.py parses vtop's OpenMetrics with prometheus_client's parser, the
reader Prometheus's own Python client uses; this checker adds the rules of
the specification that parser (0.16) lets through, each of which a stricter
reader refuses: a sample name with a suffix its family's type does not
allow (a gauge's _total), the same series twice in a family, and a raw
quote in a HELP text.

Written from the ABNF and the rules of the OpenMetrics 1.0 specification
(https://github.com/OpenObservability/OpenMetrics/blob/main/specification/OpenMetrics.md):
line by line grammar (descriptors, samples, label escaping, numbers), then
the rules the grammar alone does not carry: an exposition ends with
"# EOF"; a family is described before its samples and its lines are
contiguous; a family is declared once; sample names carry only the suffixes
their type allows; label names are unique within a sample; no two samples
of a family have the same name and labels; info samples have the value 1.

validate(text) returns the list of families, or raises ValueError saying
which line is wrong and why.
"""

import re

METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
# escaped-string: any UTF-8 but backslash, quote and newline; or \\ \" \n
ESCAPED = r'(?:[^\\"\n]|\\\\|\\"|\\n)*'
REAL = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
NUMBER = r"(?:%s|[+-]?(?:[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)|[nN][aA][nN])" % REAL
LABEL = r"(%s)=\"(%s)\"" % (LABEL_NAME, ESCAPED)
LABELS = r"\{(?:%s(?:,%s)*)?\}" % (r"%s=\"%s\"" % (LABEL_NAME, ESCAPED), r"%s=\"%s\"" % (LABEL_NAME, ESCAPED))

TYPE_RE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|gaugehistogram|stateset|info|summary|unknown)$"
                     % METRIC_NAME)
HELP_RE = re.compile(r"^# HELP (%s) (%s)$" % (METRIC_NAME, ESCAPED))
UNIT_RE = re.compile(r"^# UNIT (%s) ([a-zA-Z0-9_:]*)$" % METRIC_NAME)
SAMPLE_RE = re.compile(r"^(%s)(%s)? (%s)(?: (%s))?(?: # .*)?$" % (METRIC_NAME, LABELS, NUMBER, REAL))
LABEL_RE = re.compile(LABEL)

# the sample names each type allows, as suffixes of the family name
SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gaugehistogram": ("_bucket", "_gcount", "_gsum"),
    "stateset": ("",),
    "info": ("_info",),
    "summary": ("", "_count", "_sum", "_created"),
    "unknown": ("",),
}
RESERVED = ("_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info")


def _labels(text, where):
    if not text:
        return ()
    pairs = LABEL_RE.findall(text[1:-1])
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError("%s: a label name twice" % where)
    for name in names:
        if name.startswith("__"):
            raise ValueError("%s: label names starting with __ are reserved" % where)
    return tuple(sorted(pairs))


def validate(text):
    """Check one exposition; return [(family, type, samples)]."""
    if not text.endswith("# EOF\n") and not text.endswith("# EOF"):
        raise ValueError("the exposition does not end with # EOF")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    families = []
    seen = set()
    current = None  # [name, type, has_samples, sample keys]
    for n, line in enumerate(lines, 1):
        where = "line %d (%r)" % (n, line[:120])
        if line == "# EOF":
            if n != len(lines):
                raise ValueError("%s: text after # EOF" % where)
            break
        if line.startswith("#"):
            m = TYPE_RE.match(line) or HELP_RE.match(line) or UNIT_RE.match(line)
            if not m:
                raise ValueError("%s: not a TYPE, HELP or UNIT line" % where)
            name = m.group(1)
            if current is None or current[0] != name:
                if name in seen:
                    raise ValueError("%s: family %s described again, apart from its first lines" % (where, name))
                if line.startswith("# TYPE"):
                    current = [name, m.group(2), False, set()]
                else:
                    current = [name, "unknown", False, set()]
                seen.add(name)
                families.append(current)
            else:
                if current[2]:
                    raise ValueError("%s: a descriptor after the family's samples" % where)
                if line.startswith("# TYPE"):
                    current[1] = m.group(2)
            if line.startswith("# TYPE") and current[1] in ("gauge", "stateset", "unknown", "info"):
                if name.endswith(RESERVED):
                    raise ValueError("%s: a %s family may not be named with a reserved suffix"
                                     % (where, current[1]))
            if line.startswith("# UNIT") and m.group(2) and not name.endswith("_" + m.group(2)):
                raise ValueError("%s: the family name must end with its unit" % where)
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            raise ValueError("%s: not a sample" % where)
        name, labels, value = m.group(1), m.group(2), m.group(3)
        if current is None:
            raise ValueError("%s: a sample before any family" % where)
        family, ftype = current[0], current[1]
        if not any(name == family + s for s in SUFFIXES[ftype]):
            raise ValueError("%s: sample %s does not belong to the %s family %s" % (where, name, ftype, family))
        key = (name, _labels(labels, where))
        if key in current[3]:
            raise ValueError("%s: the same sample twice" % where)
        current[3].add(key)
        current[2] = True
        if ftype == "info" and float(value) != 1:
            raise ValueError("%s: an info sample's value must be 1" % where)
    else:
        raise ValueError("no # EOF line")
    return [(f[0], f[1], f[3]) for f in families]


def unescape(value):
    """A label value as the escaped-string rules give it."""
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "\\":
            nxt = value[i + 1]
            out.append({"\\": "\\", '"': '"', "n": "\n"}[nxt])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def samples(text):
    """Every sample of a valid exposition as (name, {label: value}, float)."""
    out = []
    for line in text.split("\n"):
        m = SAMPLE_RE.match(line)
        if m and not line.startswith("#"):
            labels = {k: unescape(v) for k, v in LABEL_RE.findall((m.group(2) or "{}")[1:-1])}
            out.append((m.group(1), labels, float(m.group(3))))
    return out
