#!/bin/bash
# screenshot / of APP after syncing PLAN (1024x700 window) into OUT.png
app=$1; plan=$2; out=$3
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl & M=$!
sleep 0.5
(cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!
sleep 2
timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir=$d/chrome --window-size=1024,300 --screenshot=$out http://127.0.0.1:18802/ >/dev/null 2>&1
kill $A $M; wait $A $M 2>/dev/null; rm -rf $d
