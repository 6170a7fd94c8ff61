#!/bin/bash
# run_restart.sh APP PLAN T1 T2: start the app, SIGKILL it after T1 s, restart it, after T2 s print
# status, ids served and the upstream request log (a RESTART line marks the restart)
app=$1; plan=$2; t1=$3; t2=$4
d=$(mktemp -d /tmp/rt3probe.XXXX); log=$d/req.jsonl
python3 /work/rt3/probe/mock.py 18801 $plan $log & M=$!
sleep 0.5
start_app() { (cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!; }
start_app; sleep $t1
echo "before kill: $(curl -s -m 3 localhost:18802/api/status)"
kill -9 $A; wait $A 2>/dev/null
echo "{\"t0\": $(date +%s.%N), \"t1\": 0, \"path\": \"----- RESTART -----\", \"status\": \"\", \"concurrent\": 0}" >> $log
start_app; sleep $t2
echo "after restart: $(curl -s -m 3 localhost:18802/api/status)"
echo "ids: $(curl -s -m 3 localhost:18802/api/invoices | python3 -c 'import json,sys; print([i["id"] for i in json.load(sys.stdin)])')"
kill $A $M 2>/dev/null; wait $A $M 2>/dev/null
python3 - $log <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
rows.sort(key=lambda r:r["t0"])
for r in rows:
    print(f"{r['path']:<28} {r['status']} in_flight={r['concurrent']}")
PY
rm -rf $d
