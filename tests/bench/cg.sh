# shellcheck shell=bash
# cg.sh - instructions per call from callgrind's dumps, for rbench.sh
# ("make bench-rdma") and profile.sh ("make profile"), which source it.
# Shell and awk only: the VM's root is the host's.
#
# The processes run under valgrind --tool=callgrind, in event mode without
# polling (RPCRDMA_POLL_US=0: spinning would be counted), and cut their
# counts themselves with callgrind's client requests: rbench's client
# around each segment of calls, its server at each RB_MARK call (rbench
# count, rbench server --callgrind), and perftest through tests/bench/
# cgcut.c at given calls of ibv_get_cq_event().  Each cut is a dump, OUT.N
# for --callgrind-out-file=OUT, named by its trigger ("desc: Trigger:
# Client Request: LABEL"); dumps only, never CALLGRIND_ZERO_STATS (see
# rbench.c).  Three segments of n, n and 2n calls give two measures of one
# call, (third - first) / n and (third - second) / n, into which set-up,
# warm-up and the markers do not enter; the figure is their mean, and half
# their difference (in % of it, without the copies of data) the spread.
#
# Objects: librpcrdma, libtirpc, libc (libc.so.6, with libpthread since
# glibc 2.34), provider (libibverbs and its rxe provider, librxe-*.so),
# other (the program itself, ld.so, librdmacm, ...).  The harness's own
# code (libcgcut.so, valgrind's vgpreload_*.so) is left out of every sum.
# memcpy and memset: libc's mem{cpy,move}* and memset* (the copies of data
# and the zeroing of buffers), already within libc.

# cg_self FILE: one line per function that has instructions of its own
# (self cost, "inclusive=no"): IR<TAB>OBJECT<TAB>FUNCTION.  The cost line
# after a calls= line is the callee's inclusive cost and is skipped.  (Not
# callgrind_annotate: valgrind 3.19's adds a call's inclusive cost to its
# caller's self cost when the call count is 0, as for a call that was
# running when the counts were cut.)
cg_self() {
	awk '
	function nm(kind, s,   id, rest) {
		if (s !~ /^\([0-9]+\)/)
			return s
		id = s
		sub(/\).*/, "", id)
		sub(/^\(/, "", id)
		rest = s
		sub(/^\([0-9]+\) ?/, "", rest)
		if (rest != "")
			N[kind, id] = rest
		return N[kind, id]
	}
	/^ob=/ { ob = nm("ob", substr($0, 4)); next }
	/^fn=/ { fn = nm("fn", substr($0, 4)); next }
	/^cob=/ { nm("ob", substr($0, 5)); next }
	/^cfn=/ { nm("fn", substr($0, 5)); next }
	/^calls=/ { skip = 1; next }
	/^[-+*0-9]/ {
		if (skip) {
			skip = 0
			next
		}
		S[ob "\t" fn] += $2
		next
	}
	END { for (k in S) if (S[k]) print S[k] "\t" k }' "$1"
}

# cg_sum FILE...: one line per dump, FILE<TAB>KEY=IR ... by object class,
# then memcpy and memset, then cq_events and write_calls, the calls of
# ibv_get_cq_event() and of write() (rxe's doorbell: one per Send) the
# dump records.  One awk for all of them: under TCG every process started
# costs.
cg_sum() {
	awk -F'\t' '
	function nm(kind, s,   id, rest) {
		if (s !~ /^\([0-9]+\)/)
			return s
		id = s
		sub(/\).*/, "", id)
		sub(/^\(/, "", id)
		rest = s
		sub(/^\([0-9]+\) ?/, "", rest)
		if (rest != "")
			N[kind, id] = rest
		return N[kind, id]
	}
	function class(o) {
		if (o ~ /libcgcut|vgpreload_/)
			return ""
		if (o ~ /\/librpcrdma\.so/)
			return "librpcrdma"
		if (o ~ /\/libtirpc\.so/)
			return "libtirpc"
		if (o ~ /\/libc\.so|\/libpthread[.-]/)
			return "libc"
		if (o ~ /\/libibverbs\.so|\/librxe-/)
			return "provider"
		return "other"
	}
	function put(   k) {
		if (file == "")
			return
		printf "%s\tlibrpcrdma=%d libtirpc=%d libc=%d provider=%d other=%d total=%d memcpy=%d memset=%d cq_events=%d write_calls=%d\n",
			file, S["librpcrdma"], S["libtirpc"], S["libc"], S["provider"],
			S["other"], S["total"], S["memcpy"], S["memset"],
			S["cq_events"], S["write_calls"]
	}
	FNR == 1 {
		put()
		file = FILENAME
		split("", N)
		split("", S)
		skip = 0
		ob = fn = cfn = c = ""
	}
	/^ob=/ { ob = nm("ob", substr($0, 4)); c = class(ob); next }
	/^fn=/ {
		fn = nm("fn", substr($0, 4))
		m = c != "libc" ? "" : fn ~ /^(__)?mem(cpy|move)/ ? "memcpy" : fn ~ /^(__)?memset/ ? "memset" : ""
		next
	}
	/^cob=/ { nm("ob", substr($0, 5)); next }
	/^cfn=/ { cfn = nm("fn", substr($0, 5)); next }
	/^calls=/ {
		skip = 1
		if (cfn == "ibv_get_cq_event" || cfn == "write") {
			split($0, a, /[= ]/)
			S[cfn == "write" ? "write_calls" : "cq_events"] += a[2]
		}
		next
	}
	/^[-+*0-9]/ {
		if (skip) {
			skip = 0
			next
		}
		if (c == "")
			next
		split($0, a, " ")
		S[c] += a[2]
		S["total"] += a[2]
		if (m != "")
			S[m] += a[2]
	}
	END { put() }' "$@"
}

# cg_index OUT: LABEL<TAB>FILE for every dump of --callgrind-out-file=OUT.
cg_index() {
	local f
	for f in "$1".*; do
		[[ -f $f ]] && break
		return 0
	done
	grep -H '^desc: Trigger: Client Request: ' "$1".* |
		sed 's/^\([^:]*\):desc: Trigger: Client Request: \(.*\)$/\2\t\1/'
}

# cg_per_call "UA UB UC" "KV-A" "KV-B" "KV-C": from the KEY=IR lines of
# three segments of UA, UB and UC calls (or iterations), KEY=IR per call
# (rounded; cq_events and *_calls, counts of calls, to 2 decimals) for
# every key, then spread_pct and units (UC minus the mean of UA and UB);
# empty when the segments cannot give a figure.  spread_pct: half the
# difference of the two measures of total - memcpy - memset (the path
# without the copies of data, which do not vary), in % of their mean.
cg_per_call() {
	awk -v u="$1" -v a="$2" -v b="$3" -v c="$4" 'BEGIN {
		split(u, U, " ")
		if (U[3] - U[1] <= 0 || U[3] - U[2] <= 0)
			exit
		na = split(a, A, " ")
		split(b, B, " ")
		split(c, C, " ")
		for (i = 1; i <= na; i++) {
			split(A[i], x, "=")
			split(B[i], y, "=")
			split(C[i], z, "=")
			if (x[1] != y[1] || x[1] != z[1])
				exit
			k = x[1]
			E1[k] = (z[2] - x[2]) / (U[3] - U[1])
			E2[k] = (z[2] - y[2]) / (U[3] - U[2])
			v = (E1[k] + E2[k]) / 2
			out = out sprintf(k ~ /_calls$|^cq_events$/ ? " %s=%.2f" : " %s=%.0f", k, v)
		}
		e1 = E1["total"] - E1["memcpy"] - E1["memset"]
		e2 = E2["total"] - E2["memcpy"] - E2["memset"]
		v = (e1 + e2) / 2
		sp = v > 0 ? (e1 > e2 ? e1 - e2 : e2 - e1) / 2 / v * 100 : 0
		printf "%s spread_pct=%.2f units=%g\n", substr(out, 2), sp,
			U[3] - (U[1] + U[2]) / 2
	}'
}

# cg_top N "UA UB UC" FILE-A FILE-B FILE-C: the N functions with the most
# instructions of their own per call, as cg_per_call counts them:
# "IR-PER-CALL  SHARE%  FUNCTION [OBJECT]", the harness's left out.
cg_top() {
	local n=$1 u=$2
	shift 2
	{
		cg_self "$1" | sed 's/^/A\t/'
		cg_self "$2" | sed 's/^/B\t/'
		cg_self "$3" | sed 's/^/C\t/'
	} | awk -F'\t' -v u="$u" -v n="$n" '
	$3 ~ /libcgcut|vgpreload_/ { next }
	{ k = $3 "\t" $4; V[$1, k] += $2; K[k] = 1 }
	END {
		split(u, U, " ")
		for (k in K) {
			e1 = (V["C", k] - V["A", k]) / (U[3] - U[1])
			e2 = (V["C", k] - V["B", k]) / (U[3] - U[2])
			v = (e1 + e2) / 2
			t += v
			if (v >= 0.5)
				P[k] = v
		}
		m = 0
		for (k in P)
			L[++m] = k
		# selection of the n largest (no asort in mawk)
		for (i = 1; i <= m && i <= n; i++) {
			b = i
			for (j = i + 1; j <= m; j++)
				if (P[L[j]] > P[L[b]])
					b = j
			x = L[i]
			L[i] = L[b]
			L[b] = x
			split(L[i], f, "\t")
			o = f[1]
			sub(/.*\//, "", o)
			printf "%8.0f %5.1f%%  %s [%s]\n", P[L[i]],
				(t > 0 ? P[L[i]] / t * 100 : 0), f[2], o
		}
		printf "%8.0f        total\n", t
	}'
}
