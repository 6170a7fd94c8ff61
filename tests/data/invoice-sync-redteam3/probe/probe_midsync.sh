#!/bin/bash
# while a slow page is pending: what do /api/status, /api/invoices and / show?
app=$1; plan=$2
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl & M=$!
sleep 0.5
(cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!
sleep 3
echo "$app mid-sync: status $(curl -s localhost:18802/api/status)  api rows: $(curl -s localhost:18802/api/invoices | python3 -c 'import json,sys;print(len(json.load(sys.stdin)))')  html rows: $(curl -s localhost:18802/ | grep -o '<tr data-id' | wc -l)"
kill $A $M; wait $A $M 2>/dev/null; rm -rf $d
