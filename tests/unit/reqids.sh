#!/bin/sh
# reqids.sh - doc/requirements.md against the tree:
#   - every requirement ID cited in src/ or tests/ has its row there
#     ("V1-RC-4/7/8", "V1-MR-2..7", "N-1..N-18" and "V1-TV4a/b" expanded;
#     an ID without its letter is satisfied by its lettered cases);
#   - every Version One rule whose level says MUST or REQUIRED is cited by
#     a file under tests/, or its row says "Not tested:" and why;
#   - no row says "Not tested:" for a rule a test does cite.
# Each finding is one FAIL line naming the ID and a file that cites it.
set -u
srcdir=${srcdir:-.}

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
exec python3 - "$srcdir" <<'EOF'
import os
import re
import sys

top = sys.argv[1]
doc = os.path.join(top, 'doc', 'requirements.md')

BASE = (r'(?:AMB-(?:V1|V2|X)-\d+'
        r'|(?:V1|V2|XC)-TV\d+[a-z]?'
        r'|(?:V1|V2)-[A-Z]+-\d+[a-z]?'
        r'|XC-\d+|[NSL]-\d+[a-z]?)')
# One citation and what may follow it: "/7/8", "/b", "..7", "..N-18",
# "..TV8".
CITE = re.compile(r'(?<![A-Za-z0-9_-])(' + BASE + r')'
                  r'((?:/(?:\d+[a-z]?|[a-z])'
                  r'|\.\.(?:' + BASE + r'|TV\d+[a-z]?|\d+[a-z]?))*)')
RULE = re.compile(r'^V1-[A-Z]+-\d+$')


def split(cid):
    """'V1-RC-4' -> ('V1-RC-', 4, ''); 'V1-TV4a' -> ('V1-TV', 4, 'a')"""
    m = re.match(r'^(.*?)(\d+)([a-z]?)$', cid)
    return m.group(1), int(m.group(2)), m.group(3)


def expand(first, rest):
    """Every ID a citation names."""
    ids = [first]
    prefix, num, _ = split(first)
    for op, tok in re.findall(r'(/|\.\.)([A-Za-z0-9-]+)', rest):
        if re.fullmatch(r'[a-z]', tok):		# V1-TV4a/b
            ids.append('%s%d%s' % (prefix, num, tok))
            continue
        _, end, letter = split(tok)		# 7, N-18, TV8
        if op == '/':
            ids.append('%s%d%s' % (prefix, end, letter))
        else:
            ids.extend('%s%d' % (prefix, n) for n in range(num + 1, end + 1))
        num = end
    return ids


def cited(sub):
    """ID -> the files under top/sub that cite it."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(os.path.join(top, sub)):
        # the fuzzers' seed corpora are binary inputs, not citations
        dirnames[:] = [d for d in dirnames
                       if os.path.join(dirpath, d) !=
                       os.path.join(top, 'tests', 'fuzz', 'seeds')]
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                with open(path, encoding='utf-8') as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            rel = os.path.relpath(path, top)
            for m in CITE.finditer(text):
                for cid in expand(m.group(1), m.group(2)):
                    found.setdefault(cid, set()).add(rel)
    return found


rows = {}
with open(doc, encoding='utf-8') as f:
    for line in f:
        m = re.match(r'^\| (' + BASE + r') \|(.*)\|\s*$', line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split('|')]

fails = 0


def fail(msg):
    global fails
    print('FAIL: ' + msg)
    fails += 1


def documented(cid):
    if cid in rows:
        return True
    # "N-2" or "V1-TV10": its lettered cases
    return not re.search(r'\d[a-z]$', cid) and \
        any(re.fullmatch(re.escape(cid) + '[a-z]', r) for r in rows)


cites = cited('src')
for cid, files in cited('tests').items():
    cites.setdefault(cid, set()).update(files)
in_tests = cited('tests')

# Without these the checks below would pass on nothing.
if len(rows) < 300:
    fail('%s: only %d ID rows read' % (doc, len(rows)))
if len(cites) < 100:
    fail('only %d cited IDs found under %s/src and %s/tests' %
         (len(cites), top, top))

for cid in sorted(cites):
    if not documented(cid):
        fail('%s (cited in %s) has no row in doc/requirements.md' %
             (cid, ', '.join(sorted(cites[cid])[:3])))

must = 0
for cid, cols in sorted(rows.items()):
    if not RULE.match(cid) or len(cols) < 3:
        continue
    level, text = cols[0], cols[-1]
    said = 'Not tested:' in text
    if not re.search(r'MUST|REQUIRED', level):
        continue
    must += 1
    tested = cid in in_tests
    if not tested and not said:
        fail('%s (%s) is cited by no test under tests/ and its row says '
             'no "Not tested:" reason' % (cid, level))
    if tested and said:
        fail('%s is cited by %s but its row says "Not tested:"' %
             (cid, ', '.join(sorted(in_tests[cid])[:3])))
if must < 50:
    fail('only %d MUST/REQUIRED rules of Version One found' % must)

if fails:
    print('reqids: %d finding(s)' % fails)
    sys.exit(1)
print('PASS: %d IDs cited in src/ and tests/ all documented; %d MUST/'
      'REQUIRED rules of RFC 8166 tested or explained' % (len(cites), must))
EOF
