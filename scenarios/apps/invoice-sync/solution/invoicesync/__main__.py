"""python3 -m invoicesync --port PORT --data DIR --upstream URL"""

import argparse
import threading
from http.server import ThreadingHTTPServer

from invoicesync.store import Store
from invoicesync.sync import Syncer
from invoicesync.web import make_handler


def main():
    parser = argparse.ArgumentParser(prog="invoicesync")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--upstream", required=True)
    args = parser.parse_args()
    store = Store(args.data)
    syncer = Syncer(store, args.upstream)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(store, syncer))
    server.daemon_threads = True
    threading.Thread(target=syncer.run, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
