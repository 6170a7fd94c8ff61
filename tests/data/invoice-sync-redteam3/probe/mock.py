"""A scriptable mock upstream for probing the red-team apps (not the grader's).

python3 mock.py PORT PLAN.json LOG.jsonl
PLAN: {"pages": [[invoice, ...], ...], "fail": {"<page>": [[503, retry_after_or_null], ...]},
       "delay": {"<page>": seconds}, "cursors": ["c..", ...]}
Every request is logged with start/end time, cursor, status and the number in flight.
"""

import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

port, plan_path, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
plan = json.loads(Path(plan_path).read_text())
pages = plan["pages"]
cursors = plan.get("cursors") or [f"c{i}" for i in range(len(pages))]
fails = {int(k): list(v) for k, v in plan.get("fail", {}).items()}
delay = {int(k): v for k, v in plan.get("delay", {}).items()}
lock = threading.Lock()
inflight = [0]
logf = open(log_path, "a")  # noqa: SIM115 (open for the server's whole life)


class H(BaseHTTPRequestHandler):
    def do_GET(self):
        t0 = time.time()
        with lock:
            inflight[0] += 1
            concurrent = inflight[0]
        try:
            q = urllib.parse.urlsplit(self.path)
            cur = urllib.parse.parse_qs(q.query).get("cursor", [None])[0]
            idx = 0 if cur is None else (cursors.index(cur) if cur in cursors else -1)
            if idx < 0:
                status, body, hdrs = 400, b'{"error":"bad cursor"}', {}
            else:
                with lock:
                    f = fails.get(idx) or []
                    step = f.pop(0) if f else None
                if step:
                    status, body, hdrs = (
                        step[0],
                        b"busy",
                        ({"Retry-After": str(step[1])} if step[1] is not None else {}),
                    )
                else:
                    time.sleep(delay.get(idx, 0))
                    nxt = cursors[idx + 1] if idx + 1 < len(pages) else None
                    status, hdrs = 200, {"Content-Type": "application/json"}
                    body = json.dumps({"data": pages[idx], "next_cursor": nxt}).encode()
            self.send_response(status)
            for k, v in hdrs.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        finally:
            with lock:
                inflight[0] -= 1
                logf.write(
                    json.dumps(
                        {
                            "t0": round(t0, 3),
                            "t1": round(time.time(), 3),
                            "path": self.path,
                            "page": idx if "idx" in dir() else None,
                            "status": status,
                            "concurrent": concurrent,
                        }
                    )
                    + "\n"
                )
                logf.flush()

    def log_message(self, *a):
        pass


ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
