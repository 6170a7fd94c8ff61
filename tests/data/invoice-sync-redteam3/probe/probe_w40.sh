#!/bin/bash
# w40: sync to done, stop, move DIR to a new path, restart there: does the completed sync run again?
# and: a brand-new empty DIR at the old path: is it ever synced?
app=${1:-w40-done-flag-in-tmp}; plan=plan_ra.json
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl & M=$!
sleep 0.5
run_app() { (cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $1 --upstream http://127.0.0.1:18801) & A=$!; }
run_app $d/data; sleep 7; kill -9 $A; wait $A 2>/dev/null
mv $d/data $d/moved; n0=$(wc -l < $d/req.jsonl)
run_app $d/moved; sleep 3
echo "$app moved DIR: status $(curl -s localhost:18802/api/status), upstream requests after restart: $(( $(wc -l < $d/req.jsonl) - n0 ))"
kill -9 $A; wait $A 2>/dev/null; n0=$(wc -l < $d/req.jsonl)
run_app $d/data; sleep 3
echo "$app new empty DIR at the old path: status $(curl -s localhost:18802/api/status), upstream requests: $(( $(wc -l < $d/req.jsonl) - n0 ))"
kill $A $M; wait $A $M 2>/dev/null; rm -rf $d
