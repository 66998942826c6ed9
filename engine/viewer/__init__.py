"""The GM viewer: the only part of tacgrid that imports pygame.

Nothing else in :mod:`engine` imports this package, so the simulation stays headless.
:mod:`engine.viewer.render` draws a map's tile layers the way Tiled does.
"""

import os

# pygame prints a banner on import; it must never end up in a command's output.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
