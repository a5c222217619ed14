#!/bin/sh
# reqids.sh - doc/requirements.md against the tree:
#   - every requirement ID cited in src/ or tests/ has its row there
#     ("V1-RC-4/7/8", "V1-MR-2..7", "N-1..N-18" and "V1-TV4a/b" expanded;
#     an ID without its letter is satisfied by its lettered cases);
#   - every Version One rule whose level says MUST or REQUIRED is cited by
#     a file under tests/, or its row says "Not tested:" and why;
#   - no row says "Not tested:" for a rule a test does cite;
#   - a citation in src/, include/, tests/ or tools/ is one the reader can
#     open: a requirement ID, an RFC or draft section, or a doc/ file with
#     a section that exists ("doc/requirements.md §6", "doc/architecture.md,
#     \"Who may grant remote access\"").  The forms that point outside the
#     repository are refused: "digest 1.7" (the implementation digest),
#     "notes 4.1" (integration notes), "issue 17 item 4" (the tracker: a
#     comment says the reason instead).
# Each finding is one FAIL line naming the ID, or the citation, and a file
# that has it.
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


def text_files(sub):
    """(path relative to top, text) of each text file under top/sub."""
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
            yield os.path.relpath(path, top), text


def cited(sub):
    """ID -> the files under top/sub that cite it."""
    found = {}
    for rel, text in text_files(sub):
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

# Citations that do not resolve inside the repository.  Documents (*.md)
# are not comments; this script names the refused forms as examples.
UNKNOWN = re.compile(r'\b(?:(?:spec |implementation )?digest(?:\s+§)?'
                     r'|(?:integration\s+)?notes'
                     r'|issues?)\s+\d+(?:\.\d+)*(?:,?\s+items?\s+\d+)?',
                     re.IGNORECASE)
DOCSEC = re.compile(r'\bdoc/([\w-]+\.md)(?:,)?\s+(?:§(\d+(?:\.\d+)*)'
                    r'(?:-(\d+(?:\.\d+)*))?|"([^"\n]+)")')

for bad in ('digest 1.7', 'Digest 6.1-6.3', 'digest § 2.3', 'notes 4.1',
            'integration notes 8.5', 'issue 17 item 4', 'issues 15 and 17',
            '(issue 12, item 5)'):
    if not UNKNOWN.search(bad):
        fail('self-test: "%s" is not recognised as an unknown citation' %
             bad)
for good in ('V1-HDR-4', 'RFC 8166 §4.5', 'doc/requirements.md §6',
             'an issue with 2 peers', 'the notes say'):
    if UNKNOWN.search(good):
        fail('self-test: "%s" is taken for an unknown citation' % good)


def headings(name):
    """The section numbers and titles of doc/name."""
    nums, titles = set(), set()
    try:
        with open(os.path.join(top, 'doc', name), encoding='utf-8') as f:
            for line in f:
                m = re.match(r'^#+\s+(?:(\d+(?:\.\d+)*)\.?\s+)?(.*?)\s*$',
                             line)
                if m:
                    if m.group(1):
                        nums.add(m.group(1))
                    titles.add(m.group(2))
    except OSError:
        return None
    return nums, titles


resolved = 0
for sub in ('src', 'include', 'tests', 'tools'):
    for rel, text in text_files(sub):
        if rel.endswith('.md') or \
                rel == os.path.join('tests', 'unit', 'reqids.sh'):
            continue
        for m in UNKNOWN.finditer(text):
            line = text.count('\n', 0, m.start()) + 1
            fail('%s:%d: "%s" cites what the repository does not hold '
                 '(a requirement ID, an RFC section or a doc/ section '
                 'instead)' % (rel, line, ' '.join(m.group(0).split())))
        for m in DOCSEC.finditer(text):
            line = text.count('\n', 0, m.start()) + 1
            secs = headings(m.group(1))
            if secs is None:
                fail('%s:%d: doc/%s does not exist' %
                     (rel, line, m.group(1)))
                continue
            want = [g for g in (m.group(2), m.group(3)) if g]
            for num in want:
                if num not in secs[0]:
                    fail('%s:%d: doc/%s has no section %s' %
                         (rel, line, m.group(1), num))
            if m.group(4) and m.group(4) not in secs[1]:
                fail('%s:%d: doc/%s has no section "%s"' %
                     (rel, line, m.group(1), m.group(4)))
            resolved += 1

if fails:
    print('reqids: %d finding(s)' % fails)
    sys.exit(1)
print('PASS: %d IDs cited in src/ and tests/ all documented; %d MUST/'
      'REQUIRED rules of RFC 8166 tested or explained; no digest, notes or '
      'issue citation, %d doc/ sections cited all exist' %
      (len(cites), must, resolved))
EOF
