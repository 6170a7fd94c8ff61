"""Run as a file by ``carry.listing`` inside a tree, never imported: that tree's own harness
lists the files its era says grade the suite given (``sys.argv[1]``), and the stamp it gives
the suite, as one JSON line.

Its first act puts the tree (the working folder the carry gives it) in place of this file's
folder at the head of the path, so ``harness`` below is the tree's, whatever its age (an
older harness may lack ``era.code_paths``). It defines no function, so it needs no other
module of the harness it ships in.
"""

import json
import os
import sys
from pathlib import Path

sys.path[0] = os.getcwd()

import harness  # noqa: E402
from harness.scoring import era  # noqa: E402
from harness.verify.scoring_bridge import load_suite_module  # noqa: E402

suite = load_suite_module(Path(sys.argv[1])).suite
if hasattr(era, "code_paths"):
    listed = era.code_paths(suite)
else:
    listed = [*suite.source_files(), *suite.fixtures, *era.FRAMEWORK]
try:
    got = era.stamp(suite)
    stamped = {"calibrated": got.calibrated, "scorer": got.scorer, "era": got.era}
except Exception as exc:
    stamped = {"calibrated": False, "scorer": "", "era": "", "error": str(exc)}
said = {"paths": [str(p) for p in listed], "harness": harness.__file__, "stamp": stamped}
print(json.dumps(said))
