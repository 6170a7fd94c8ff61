#!/bin/bash
# SIGKILL the app at random moments during a 20000-invoice sync (pages of 500, no overlap), restart, N times;
# after each kill: integrity_check and whether the stored count is a whole number of pages
app=$1; n=${2:-15}
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 plan_big.json $d/req.jsonl & M=$!
sleep 0.4
db=$(case $app in r03*) echo state.sqlite3;; *) echo invoices.db;; esac)
bad=0
for i in $(seq $n); do
  (cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) 2>/dev/null & A=$!
  sleep $(python3 -c "import random; print(round(random.uniform(0.15, 0.9), 3))")
  kill -9 $A; wait $A 2>/dev/null
  r=$(python3 -c "
import sqlite3
db = sqlite3.connect('file:$d/data/$db?mode=ro', uri=True)
ic = db.execute('PRAGMA integrity_check').fetchone()[0]
n = db.execute('SELECT COUNT(*) FROM invoices').fetchone()[0]
print(ic, n, 'partial-page' if n % 500 else 'whole-pages')" 2>&1 | tail -1)
  case "$r" in "ok "*whole-pages) ;; *) bad=$((bad+1)); echo "  kill $i: $r";; esac
done
echo "$app: $n kills, $bad bad states"
kill $M; wait $M 2>/dev/null; rm -rf $d
