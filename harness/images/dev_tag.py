"""``python -m harness.images.dev_tag NAME``: ensure an image and print its tag (for scripts)."""

from __future__ import annotations

import sys

from harness.errors import HarnessError
from harness.images.build import ensure_image


def main(argv: list[str]) -> int:
    """Print the current tag of ``argv[0]`` (default env-python), building it if needed."""
    name = argv[0] if argv else "env-python"
    try:
        ref = ensure_image(name, progress=lambda m: print(m, file=sys.stderr))
    except HarnessError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    print(ref.tag)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
