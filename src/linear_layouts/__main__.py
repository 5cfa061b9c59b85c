"""``python -m linear_layouts``: the ``linear-layouts`` command (:func:`linear_layouts.cli.main`), for an
environment whose scripts folder is not on ``PATH``.

    python -m linear_layouts show 'BlockedLayout([1,4],[4,8],[4,1],[1,0])' --shape 16,32
"""

import sys

from linear_layouts.cli import main

if __name__ == "__main__":
    sys.exit(main())
