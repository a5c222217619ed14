#!/bin/sh
# layers.sh - the layers' direction, as doc/hacking.md's table says it:
# every #include "..." and every call of another layer's
# function in src/**/*.[ch] must point at the file's own layer or one its
# "May use" column names.  Also: the environment is read only through
# src/conf/rc_env.h, and every name given to rc_getenv() is in its table.
#
# A call's layer is the folder that defines the function (a non-static
# definition in src/), else the layer whose prefix it carries (rw_, rt_,
# rr_, ulb_, tr_, rl_, rc_: static inline helpers of a header).  Calls
# through a pointer (p->fn(), s.fn()) and file-local functions are not
# calls across layers.  A function declared in a header the "May use"
# column names (`glue/rpcrdma_err.h`), or in include/rpc/rpcrdma.h when it
# says "the public header", may be called.  Comments and strings are
# ignored.
#
# Each violation is one FAIL line "file:line: what"; exit 1 if any.
#   layers.sh               check $srcdir/src against $srcdir/doc/hacking.md
#   layers.sh --self-test   copy the tree into a temporary directory, plant
#                           one violation of each kind, and check that each
#                           is reported with its file and line (and that the
#                           clean copy passes).
set -u
srcdir=${srcdir:-.}

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
exec python3 - "$srcdir" "$@" <<'EOF'
import os
import re
import shutil
import subprocess
import sys
import tempfile

ALWAYS = {'config.h', 'compiler.h'}  # src/ itself: anyone may include them
FIXED_PREFIX = {'rw_': 'wire', 'rt_': 'transport', 'rr_': 'rpc',
                'ulb_': 'ulb', 'tr_': 'trace', 'rl_': 'log', 'rc_': 'conf'}


def table(top):
    """doc/hacking.md's layer table: {layer: (folders, headers)}."""
    rows = {}
    with open(os.path.join(top, 'doc', 'hacking.md')) as f:
        for line in f:
            m = re.match(r'^\| `src/(\w+)` \|[^|]*\|([^|]*)\|', line)
            if m:
                rows[m.group(1)] = m.group(2)
    if not rows:
        sys.exit('FAIL: no layer table in doc/hacking.md')
    out = {}
    for layer, use in rows.items():
        words = [w.strip() for w in use.split(',')]
        folders = {w for w in words if w in rows}
        headers = {w.strip('`') for w in words
                   if re.fullmatch(r'`\w+/[\w.]+\.h`', w)}
        paths = [os.path.join(top, 'src', h) for h in headers]
        if 'the public header' in words:
            paths += [os.path.join(top, 'include', 'rpc', 'rpcrdma.h')]
        out[layer] = (folders, headers, declared(paths))
    return out


def declared(paths):
    """The functions (and function-like macros) the headers declare."""
    names = set()
    for p in paths:
        with open(p) as f:
            names |= set(re.findall(r'\b([A-Za-z_]\w*)\s*\(',
                                    strip(f.read())))
    return names


def strip(text):
    """Comments and string/char literals blanked, newlines kept."""
    def blank(m):
        s = m.group(0)
        if s.startswith('"') or s.startswith("'"):
            return s[0] + re.sub(r'[^\n]', ' ', s[1:-1]) + s[-1]
        return re.sub(r'[^\n]', ' ', s)
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"'
                  r"|'(?:\\.|[^'\\\n])*'", blank, text, flags=re.S)


def sources(root):
    for d, _, files in sorted(os.walk(root)):
        for n in sorted(files):
            if n.endswith(('.c', '.h')):
                yield os.path.join(d, n)


def layer_of(root, path):
    rel = os.path.relpath(path, root)
    return rel.split(os.sep)[0] if os.sep in rel else None


DEF = re.compile(r'^(?!static\b|typedef\b|extern\b|#|\s)[^;{}()=]*?'
                 r'\b([A-Za-z_]\w*)\s*\(', re.M)


def close_paren(text, i):
    depth = 0
    for j in range(i, len(text)):
        if text[j] == '(':
            depth += 1
        elif text[j] == ')':
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def definitions(text, static):
    """Names of the functions defined here (static ones or the others)."""
    names = set()
    rx = re.compile(r'^static\b[^;{}=]*?\b([A-Za-z_]\w*)\s*\(', re.M) \
        if static else DEF
    for m in rx.finditer(text):
        end = close_paren(text, m.end() - 1)
        rest = text[end + 1:end + 200]
        rest = re.sub(r'__attribute__\s*\(\(.*?\)\)', '', rest, flags=re.S)
        if rest.lstrip().startswith('{'):
            names.add(m.group(1))
    return names


def check(top):
    root = os.path.join(top, 'src')
    rules = table(top)
    texts, owner, fails = {}, {}, []
    for p in sources(root):
        with open(p, errors='replace') as f:
            texts[p] = f.read()
        layer = layer_of(root, p)
        if layer is None:
            continue
        if layer not in rules:
            fails.append('%s:1: folder src/%s is not in doc/hacking.md\'s '
                         'layer table' % (os.path.relpath(p, top), layer))
            continue
        for name in definitions(strip(texts[p]), False):
            owner.setdefault(name, layer)
    env_names = set(re.findall(r'\{\s*"(\w+)",\s*(?:true|false)\s*\}',
                               texts.get(os.path.join(root, 'conf',
                                                      'rc_env.h'), '')))
    for p, raw in texts.items():
        layer = layer_of(root, p)
        if layer not in rules:
            continue
        folders, headers, api = rules[layer]
        rel = os.path.relpath(p, top)
        code = strip(raw)
        local = definitions(code, True) | definitions(code, False)
        lines = raw.split('\n')
        for no, line in enumerate(lines, 1):
            m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            if inc in ALWAYS or inc.startswith('xdr/'):
                continue
            if '/' in inc:
                to = inc.split('/')[0]
            elif os.path.exists(os.path.join(os.path.dirname(p), inc)):
                to = layer
            else:
                to = None
            if to == layer or to in folders or inc in headers:
                continue
            fails.append('%s:%d: src/%s includes "%s" (%s may use: %s)' % (
                rel, no, layer, inc, layer,
                ', '.join(sorted(folders | headers)) or 'nothing'))
        for no, line in enumerate(code.split('\n'), 1):
            if re.match(r'\s*#', line):
                continue
            for m in re.finditer(r'(->|\.)?\s*\b([A-Za-z_]\w*)\s*\(', line):
                name = m.group(2)
                if m.group(1) or name in local:
                    continue
                to = owner.get(name)
                if to is None:
                    pre = re.match(r'[a-z]+_', name)
                    to = FIXED_PREFIX.get(pre.group(0)) if pre else None
                if to is None or to == layer or to in folders or name in api:
                    continue
                fails.append('%s:%d: src/%s calls %s() of src/%s '
                             '(%s may use: %s)' % (
                                 rel, no, layer, name, to, layer,
                                 ', '.join(sorted(folders)) or 'nothing'))
            for m in re.finditer(r'\b(secure_getenv|getenv)\s*\(', line):
                if not p.endswith(os.path.join('conf', 'rc_env.h')):
                    fails.append('%s:%d: %s() outside src/conf/rc_env.h: '
                                 'use rc_getenv()' % (rel, no, m.group(1)))
        for m in re.finditer(r'\brc_getenv\s*\(\s*"(\w+)"', raw):
            if m.group(1) not in env_names:
                no = raw.count('\n', 0, m.start()) + 1
                fails.append('%s:%d: %s is not in src/conf/rc_env.h\'s '
                             'table' % (rel, no, m.group(1)))
    return fails


def plant(top, rel, text):
    """Put text into top/rel: an #include after its last #include, a
    statement at the top of its first function body.  The file:line: it
    lands on."""
    p = os.path.join(top, rel)
    with open(p) as f:
        lines = f.read().split('\n')
    if text.startswith('#include'):
        i = max(k for k, l in enumerate(lines) if l.startswith('#include'))
    else:
        i = next(k for k, l in enumerate(lines) if l == '{')
    lines.insert(i + 1, text)
    with open(p, 'w') as f:
        f.write('\n'.join(lines))
    return '%s:%d:' % (rel, i + 2)


def self_test(top):
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in ('src', 'include'):
            shutil.copytree(os.path.join(top, d), os.path.join(tmp, d))
        os.mkdir(os.path.join(tmp, 'doc'))
        shutil.copy(os.path.join(top, 'doc', 'hacking.md'),
                    os.path.join(tmp, 'doc'))
        got = check(tmp)
        if got:
            print('FAIL: self-test: the clean copy fails:\n' + '\n'.join(got))
            return 1
        print('ok - self-test: the clean copy passes')
        cases = [
            ('glue includes transport', 'src/glue/svc_rdma.c',
             '#include "transport/rt_conn.h"'),
            ('glue calls transport', 'src/glue/svc_rdma.c',
             '\trt_conn_destroy(NULL);'),
            ('glue calls wire', 'src/glue/clnt_msg.c',
             '\trw_xdr_begin_body(NULL);'),
            ('wire includes rpc', 'src/wire/rw_hdr.c',
             '#include "rpc/rr_call.h"'),
            ('wire calls rpc', 'src/wire/rw_hdr.c', '\t(void)rr_now_ms();'),
            ('wire calls transport', 'src/wire/rw_chunk.c',
             '\trt_conn_destroy(NULL);'),
            ('transport calls glue', 'src/transport/rt_conn.c',
             '\trpcrdma_attr_init(NULL);'),
            ('transport includes rpc', 'src/transport/rt_cq.c',
             '#include "rpc/rr_serve.h"'),
            ('ulb calls rpc', 'src/ulb/ulb_table.c',
             '\t(void)rr_now_ms();'),
            ('log calls wire', 'src/log/rl_log.c', '\t(void)rw_get32(NULL);'),
            ('netid calls rpc', 'src/netid/netid_clnt.c',
             '\t(void)rr_now_ms();'),
            ('netid calls a glue internal', 'src/netid/netid_svc.c',
             '\tsvc_xprt_free(NULL);'),
            ('netid includes a glue internal', 'src/netid/netid_clnt.c',
             '#include "glue/svc_xprt.h"'),
            ('getenv outside conf', 'src/ulb/ulb_table.c',
             '\t(void)getenv("HOME");'),
            ('a variable not in the table', 'src/log/rl_log.c',
             '\t(void)rc_getenv("RPCRDMA_NOT_A_VAR");'),
        ]
        for what, rel, text in cases:
            p = os.path.join(tmp, rel)
            shutil.copy(p, p + '.orig')
            where = plant(tmp, rel, text)
            got = check(tmp)
            shutil.move(p + '.orig', p)
            if len(got) == 1 and got[0].startswith(where):
                print('ok - self-test: %s: %s' % (what, got[0]))
            else:
                print('FAIL: self-test: %s: expected one line at %s, got:'
                      '\n  %s' % (what, where, '\n  '.join(got) or 'none'))
                bad = 1
    return bad


def main():
    top = sys.argv[1]
    if sys.argv[2:] == ['--self-test']:
        sys.exit(self_test(top))
    fails = check(top)
    for f in fails:
        print('FAIL: ' + f)
    if fails:
        sys.exit(1)
    print('ok - every include and call of src/ follows doc/hacking.md\'s '
          'layer table; the environment is read through src/conf/rc_env.h')
    # make check runs the self-test too: a checker that cannot fail
    # proves nothing.
    sys.exit(self_test(top))


main()
EOF
