#!/bin/bash
# the upstream is down for the first 2 s (connection refused), then comes up: does the sync finish?
app=$1; plan=$2
d=$(mktemp -d /tmp/rt3probe.XXXX)
(cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!
sleep 2
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl 2>/dev/null & M=$!
sleep 6
echo "$app: upstream down 2 s then up -> status $(curl -s localhost:18802/api/status), upstream saw $(wc -l < $d/req.jsonl) requests"
kill $A $M; wait $A $M 2>/dev/null; rm -rf $d
