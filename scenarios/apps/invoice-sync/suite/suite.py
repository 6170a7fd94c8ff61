"""Scorer of apps/invoice-sync 4.1: execute the built app against the seeded mock upstream.

``context()`` runs the scenario once and collects evidence; the checks only read it.
The app runs confined (``appkit.jail``: its own user, its own tree copy; it cannot reach
this suite, the seed, the fixtures or the trace), with ``--data`` naming a folder whose
parents do not exist yet (the SPEC says create it). The run, three lives and two more:

1. start the mock and the app; while the app waits on the held *kill page*, ask its
   /health (a watch asks every 0.25 s, booting included, with an idle connection held
   open as a browser's preconnect is), then SIGKILL it;
2. respawn it; at its first file write after a page drawn from the seed (between the
   kill page and the first fault page) was answered, SIGKILL it at once: a kill that
   lands inside the page's commit, or between two of its writes;
3. respawn it with the upstream down and read what it serves (what survived), then let
   it finish (through a reset, a run of eleven 503s with Retry-After inside it, a slow
   page); a browser watches its page from this restart to the end (console errors and
   every text a row's cell ever displays, judged against the SPEC's rendering:
   ``user_view``), reads its rows mid-sync (while the app waits on the 503 run) against
   what /api/invoices lists then, and reads the rendered table at the end as a user
   does: scrolling with the wheel or the keyboard over both axes, never
   programmatically (a cell counts when every part of it was seen inside the window,
   not clipped, not covered);
4. SIGKILL again after completion, take the upstream offline, respawn, read what survived;
5. SIGKILL, move --data away, respawn with the same arguments: an empty folder must not
   read "done" (state kept anywhere but --data shows).

From start to end a watch samples ``/api/status`` every ``STATUS_EVERY_S`` and each
sample is judged against what the SPEC allows at that moment: the SPEC's words, "done"
only once the last page was answered (and then with every invoice counted), never
"syncing" again once done, the count never shrinking (it counts stored invoices, which a
SIGKILL cannot take away; only the emptied --data starts again from 0).

Faults and data from the seed over the range the SPEC allows and just past it (frozen
structure, moving positions, see ``schedule``): a run of eleven 503s on one page, nine
plain (a 1.5x backoff from 0.2 s reaches the 5 s cap at its ninth pause: any lower cap
shows; the pauses are judged against the SPEC's 1.5x and cap with a tolerance no wider
than the latency measured on the run) and two with Retry-After (1-3 s at a drawn
position among the first four, 6 s last: one past the cap); the reset page closes its
first one or two asks without an answer (a client that gives up on a connection error
never copies it); every other page after the kill page answers one plain 503 first (a
*blip*: one more first pause); a page answered after 7-7.5 s (the SPEC waits 6 s; a
client may give up after 6 s and ask again, one request at a time: its abandoned
connection is seen closing, a hedger's is not); overlaps that repeat an *earlier*
invoice in the middle of a later page; one zero amount in each exponent; cursors with
URL-reserved characters; names with surrounding spaces, of 300 characters, one long
unbroken word, non-Latin scripts; 460-500 more invoices on an early page (over 500).
Over the range of the SPEC's opaque ids, "arbitrary text" and pages (4.2): ids that
differ from another's only by letter case; one name in both NFC and NFD, names that
NFC or only NFKC changes, text outside Latin-1 and the BMP (emoji, ZWJ sequences, CJK
extension B, right-to-left with a mark, combining marks) and multibyte text in every
bulk name (a byte/char confusion cuts rows); pages sent as raw UTF-8 JSON without a
charset parameter, one drawn page with ``\\u`` escapes; a page of repeats only before
the kill page and one or two pages with ``"data": []`` and a next cursor, never where
the write kill is drawn (every fault page index moves with them).
Time-aware checks grade the mock's trace one life of the app at a time: a gap that
spans a SIGKILL is no pause of the app's.

Every SPEC MUST id is verified by a check (``musts=``); success means all are met. A
check that carries a MUST is all or nothing. `harness coverage apps/invoice-sync` lists
them.

The suite is a package of modules, one per journey: ``schedule`` (the SPEC's bounds, the
fixtures and faults drawn from the seed), ``upstream`` (the mock), ``watches`` and
``execution`` (the run), ``evidence``, and the checks: ``status``, ``sync_faults``,
``durability``, ``api``, ``money``, ``console``. The harness imports this file alone
(``harness.verify.scoring_bridge.load_suite_module``), so it declares its folder as its
package path: its sibling modules then import by relative import.
"""

import sys
from pathlib import Path

__path__ = [str(Path(__file__).resolve().parent)]
__package__ = __name__
if __spec__ is not None:
    __spec__.submodule_search_locations = __path__
assert __name__ in sys.modules, "import the suite as the harness does (in sys.modules)"

from . import status  # noqa: E402  (its app.health is every check's root: first)

# isort: split
from . import api, console, durability, money, sync_faults  # noqa: E402  (the other checks)
from .execution import context  # noqa: E402
from .grader import suite  # noqa: E402

CHECK_MODULES = (status, sync_faults, durability, api, money, console)
__all__ = ["CHECK_MODULES", "context", "suite"]
