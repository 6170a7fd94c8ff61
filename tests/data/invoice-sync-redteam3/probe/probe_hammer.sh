#!/bin/bash
# 8 clients hammer /api/invoices, /api/status and / while a 20000-invoice sync runs: count failed answers
app=$1; plan=plan_big.json
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl & M=$!
sleep 0.5
(cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) 2>$d/err & A=$!
sleep 0.7
python3 - <<'PY'
import threading, urllib.request, time
bad = []; ok = [0]
def worker():
    t_end = time.time() + 6
    while time.time() < t_end:
        for p in ("/api/invoices", "/api/status", "/"):
            try:
                with urllib.request.urlopen("http://127.0.0.1:18802" + p, timeout=10) as r:
                    r.read(); ok[0] += 1
            except Exception as e:
                bad.append(f"{p}: {e!r}"[:100])
ts = [threading.Thread(target=worker) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(f"ok answers {ok[0]}, failed {len(bad)}", bad[:3])
PY
echo "status: $(curl -s localhost:18802/api/status); server stderr: $(grep -c Error $d/err) error lines; $(grep -m1 -E 'Error|error' $d/err)"
kill $A $M; wait $A $M 2>/dev/null; rm -rf $d
