#!/bin/bash
# run_probe.sh APP PLAN SECONDS [extra]: start mock + app, wait, print status and the request log
app=$1; plan=$2; secs=$3
d=$(mktemp -d /tmp/rt3probe.XXXX); log=$d/req.jsonl
python3 /work/rt3/probe/mock.py 18801 $plan $log & M=$!
sleep 0.5
(cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!
sleep $secs
echo "status: $(curl -s -m 3 localhost:18802/api/status)"
kill $A $M 2>/dev/null; wait $A $M 2>/dev/null
python3 - $log <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
rows.sort(key=lambda r:r["t0"])
prev=None
for r in rows:
    gap = "" if prev is None else f"+{r['t0']-prev:.2f}s after previous answer"
    print(f"{r['path']:<28} {r['status']} in_flight={r['concurrent']} took={r['t1']-r['t0']:.2f}s {gap}")
    prev=r["t1"]
PY
rm -rf $d
