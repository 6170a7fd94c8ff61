#!/bin/bash
app=$1; plan=$2
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl & M=$!
sleep 0.5
(cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!
sleep 2
curl -s localhost:18802/api/invoices | python3 -c 'import json,sys; [print("  api:", repr(i["customer"][:40]), len(i["customer"])) for i in json.load(sys.stdin)]'
curl -s localhost:18802/ | grep -o '<tr data-id="inv_003"><td>inv_003</td><td>[^<]*' | sed 's/^/  html: /'
kill $A $M; wait $A $M 2>/dev/null; rm -rf $d
