#!/bin/sh
# contract.sh - doc/libtirpc-contract.md against the tree:
#   - every row of its tables names, in its last column, the test that
#     shows it: `FILE` "TEXT", the file exists and TEXT is in it (a C
#     file's adjacent string literals joined, as the compiler does); a
#     row that says "TODO: tests/vm/<to be filled>" fails;
#   - every libtirpc entry point and control request the contract must
#     cover has a row.
# One line per finding ("FAIL - ..."), then one line of totals; the exit
# status is 1 if anything failed.
set -u
srcdir=${srcdir:-.}

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
exec python3 - "$srcdir" <<'EOF'
import os
import re
import sys

top = sys.argv[1]
doc = os.path.join(top, 'doc', 'libtirpc-contract.md')

# What the first column must name somewhere.
REQUIRED = """
clnt_create clnt_create_timed clnt_create_vers clnt_create_vers_timed
clnt_tp_create clnt_tp_create_timed clnt_tli_create clnt_call clnt_freeres
clnt_geterr clnt_perror clnt_sperror clnt_destroy
CLSET_TIMEOUT CLGET_TIMEOUT CLSET_RETRY_TIMEOUT CLGET_RETRY_TIMEOUT
CLGET_SERVER_ADDR CLGET_SVC_ADDR CLSET_SVC_ADDR CLGET_FD CLSET_FD_CLOSE
CLSET_FD_NCLOSE CLGET_XID CLSET_XID CLGET_VERS CLSET_VERS CLGET_PROG
CLSET_PROG CLSET_CONNECT
rpc_call rpc_reg rpc_broadcast clnt_broadcast
svc_create svc_tp_create svc_tli_create svc_reg svc_unreg svc_register
svc_unregister svc_run svc_getreq svc_getreqset svc_getreq_poll
svc_getreq_common svc_fdset svc_pollfd svc_max_pollfd svc_sendreply
svc_getargs svc_freeargs svc_getcaller svc_getrpccaller
svcerr_noproc svcerr_decode svcerr_systemerr svcerr_auth svcerr_weakauth
svcerr_noprog svcerr_progvers
SVCGET_VERSQUIET SVCSET_VERSQUIET SVCGET_CONNMAXREC SVCSET_CONNMAXREC
SVCGET_RDMA_STATS xprt_register xprt_unregister svc_destroy
rpcb_set rpcb_unset rpcb_getaddr rpcb_getmaps getnetconfigent
""".split()

REF = re.compile(r'`([^`]+)` "((?:[^"\\]|\\.)*)"')
TODO = 'TODO: tests/vm/<to be filled>'

failures = 0
sources = {}


def fail(msg):
    global failures
    failures += 1
    print('FAIL - ' + msg)


def source(path):
    if path not in sources:
        full = os.path.join(top, path)
        try:
            with open(full, encoding='utf-8') as f:
                text = f.read()
        except OSError:
            text = None
        if text is not None and path.endswith(('.c', '.h')):
            text = re.sub(r'"\s*\n\s*"', '', text)
        sources[path] = text
    return sources[path]


with open(doc, encoding='utf-8') as f:
    lines = f.read().split('\n')

rows = refs = todos = 0
named = set()
for n, line in enumerate(lines, 1):
    if not line.startswith('|') or re.match(r'^\|[-|]+\|$', line):
        continue
    cells = [c.strip() for c in line.strip('|').split('|')]
    if cells[-1] == 'Test':
        continue
    rows += 1
    if len(cells) != 4:
        fail('%s:%d: %d columns, not 4' % (doc, n, len(cells)))
        continue
    named.update(re.findall(r'`([A-Za-z_][A-Za-z_0-9]*)`', cells[0]))
    test = cells[3]
    if test == TODO:
        todos += 1
        fail('%s:%d: %s: no test yet (TODO)' % (doc, n, cells[0]))
        continue
    found = REF.findall(test)
    if not found:
        fail('%s:%d: %s: no `FILE` "TEXT" in "%s"' %
             (doc, n, cells[0], test))
    for path, text in found:
        refs += 1
        src = source(path)
        if src is None:
            fail('%s:%d: %s: no file %s' % (doc, n, cells[0], path))
        elif text not in src:
            fail('%s:%d: %s: %s has no check "%s"' %
                 (doc, n, cells[0], path, text))

for name in REQUIRED:
    if name not in named:
        fail('%s: no row names %s' % (doc, name))

print('%s - %d rows, %d tests found, %d TODO, %d required names covered'
      % ('ok' if not failures else 'FAIL', rows, refs, todos,
         len([r for r in REQUIRED if r in named])))
sys.exit(1 if failures else 0)
EOF
