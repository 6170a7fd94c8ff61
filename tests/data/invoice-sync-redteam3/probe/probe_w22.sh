#!/bin/bash
# w22: the state a SIGKILL between its two commits leaves (last page + cursor NULL committed, done still '0'),
# then a restart: which pages does the upstream see again?
app=w22-done-flag-separate-tx; plan=plan_ra.json
d=$(mktemp -d /tmp/rt3probe.XXXX)
python3 /work/rt3/probe/mock.py 18801 $plan $d/req.jsonl & M=$!
sleep 0.5
start_app() { (cd /work/rt3/$app && PYTHONDONTWRITEBYTECODE=1 exec python3 -m invoicesync --port 18802 --data $d/data --upstream http://127.0.0.1:18801) & A=$!; }
start_app; sleep 7; kill -9 $A; wait $A 2>/dev/null
python3 -c "
import sqlite3; db=sqlite3.connect('$d/data/invoices.db'); db.execute(\"UPDATE state SET value='0' WHERE key='done'\"); db.commit()
print('rewound to the between-commits state:', db.execute('select * from state').fetchall())"
n0=$(wc -l < $d/req.jsonl); start_app; sleep 3
echo "after restart: $(curl -s localhost:18802/api/status); requests before restart $n0, after $(( $(wc -l < $d/req.jsonl) - n0 )):"
tail -n +$((n0+1)) $d/req.jsonl | python3 -c "import sys,json; [print('  ', json.loads(l)['path']) for l in sys.stdin]"
kill $A $M; wait $A $M 2>/dev/null; rm -rf $d
