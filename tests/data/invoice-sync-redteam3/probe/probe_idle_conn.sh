#!/bin/bash
# an idle client (a browser preconnect) holds one connection open; does /health still answer?
app=$1; plan=$2
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl & M=$!
sleep 0.5
(cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!
sleep 2
python3 -c "import socket,time; s=socket.create_connection(('127.0.0.1',18802)); time.sleep(8)" & I=$!
sleep 0.5
t0=$(date +%s.%N); out=$(curl -s -m 5 localhost:18802/health); echo "$app: /health with an idle connection open -> '${out}' after $(echo "$(date +%s.%N) - $t0" | bc) s"
kill $I $A $M 2>/dev/null; wait $I $A $M 2>/dev/null; rm -rf $d
