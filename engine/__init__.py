"""tacgrid: a tactical grid movement simulator.

The engine runs headless. Only :mod:`engine.viewer` imports pygame, and nothing in the
engine imports the viewer.
"""

__version__ = "0.1.0"
